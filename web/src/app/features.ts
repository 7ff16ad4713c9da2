// THE list of features, in tab order: each names the sub-state it owns (its key in the state and
// its rows of the state table) and its views (tabs). Adding a tab = a folder with its sub-state
// rows (state.ts), its view (a ViewFactory with a context type of its own) and one line here; the
// State type, the table, the link format, the view ids and the tabs follow from this list
// (app/state.ts, app/page.ts). The page's context must satisfy each view's context type (the
// compiler checks it in app/page.ts). Keep keys and order: they are the link format (v1 links).
// A view either renders itself from the page's context (the labs own their Workers) or, with
// `needsResult`, is drawn by its feature's controller, which owns the computation the views share
// (ui/view.ts, ResultController): the attention views', made once by the page from the factory
// named below.
import { MODEL } from '../attention/state';
import { ARRAYS } from '../attention/arrays/state';
import { EXERCISE } from '../attention/exercise/state';
import { createAttentionController } from '../attention/controller';
import { headsView } from '../attention/heads-view';
import { maskView } from '../attention/mask-view';
import { scaleView } from '../attention/scale-view';
import { outputView } from '../attention/output-view';
import { TIMING } from '../timing/state';
import { timingView } from '../timing/timing-view';
import { TRAIN } from '../train/state';
import { trainView } from '../train/train-view';
import { DECODE } from '../decode/state';
import { decodeView } from '../decode/decode-view';
import { LESSON } from '../lesson/state';
import { lessonView } from '../lesson/lesson-view';
import { TEXT } from '../text/state';
import { textView } from '../text/text-view';

export const FEATURES = [
  { key: 'model', state: MODEL, views: [headsView, maskView, scaleView, outputView] },
  { key: 'timing', state: TIMING, views: [timingView] },
  { key: 'train', state: TRAIN, views: [trainView] },
  { key: 'decode', state: DECODE, views: [decodeView] },
  { key: 'lesson', state: LESSON, views: [lessonView] },
  // The student's own arrays (shown by the attention views; no tab of their own). Last: its keys
  // are new, so every earlier link reads as before.
  { key: 'arrays', state: ARRAYS, views: [] },
  // The exercise a link opens (shown by the attention views' controller; no tab of its own).
  { key: 'exercise', state: EXERCISE, views: [] },
  // The Text model tab (a char-level model trained on State of the Union addresses). After the
  // others: its keys are new, so every earlier link reads as before; its tab comes last.
  { key: 'text', state: TEXT, views: [textView] },
] as const;

export type Feature = (typeof FEATURES)[number];
/** Every view a link may name, in tab order. */
export const VIEW_FACTORIES = FEATURES.flatMap((f): Feature['views'][number][] => [...f.views]);
export type ViewId = Feature['views'][number]['id'];
export const VIEWS = VIEW_FACTORIES.map((f) => f.id);

/** The controller of the views with `needsResult` (the attention views): one per page. */
export const createResultController = createAttentionController;
export type { Timing } from '../attention/controller';
export type { ResultParts } from '../attention/context';
