// Every view (tab) of the page, in tab order. A new view (e.g. the timing lab) goes here.
import type { ViewFactory } from './types';
import { headsView } from './heads';
import { maskView } from './mask';
import { scaleView } from './scale';
import { outputView } from './output';
import { timingView } from './timing';

export const VIEW_FACTORIES: ViewFactory[] = [headsView, maskView, scaleView, outputView, timingView];
