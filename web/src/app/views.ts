// Every view (tab) of the page, in tab order. A new view (e.g. the timing lab) goes here.
import type { ViewFactory } from '../ui/view';
import { headsView } from '../heads/heads-view';
import { maskView } from '../heads/mask-view';
import { scaleView } from '../heads/scale-view';
import { outputView } from '../heads/output-view';
import { timingView } from '../timing/timing-view';
import { trainView } from '../train/train-view';
import { decodeView } from '../decode/decode-view';

export const VIEW_FACTORIES: ViewFactory[] = [headsView, maskView, scaleView, outputView, timingView, trainView, decodeView];
