// The view (tab) system, generic over what a view is given. A view is a self-contained module with
// a root element and a render function; the page (app/) owns state, compute and the URL, and
// hands each view a context. Each feature names the context its views need (e.g.
// attention/context.ts, timing's TimingContext) as the part of the page it reads, so a view
// imports no page type; the page's own context satisfies every feature's (checked by the compiler
// where app/features.ts lists the views, with no cast).
import type { Heatmap } from './heatmap';

/** What every view may use, for a state slice S and a patch type P it emits. */
export interface LabContext<S, P> {
  state: S;
  /** Speak a sentence through the page's aria-live region. */
  announce: (text: string) => void;
  /** Width available to the view, CSS px. */
  width: number;
  /** In fit mode (an embed given a fixed box), the height available to the view, CSS px: its
   *  main figure is scaled to it and nothing scrolls. Undefined otherwise (the page grows). */
  height?: number;
  /** Change the page's state (normalised, written to the URL). */
  update: (patch: P) => void;
}

export interface View<Ctx> {
  readonly id: string;
  readonly root: HTMLElement;
  render: (ctx: Ctx) => void;
  /** Heatmaps a PNG export can offer, by name. */
  heatmaps(): { name: string; heatmap: Heatmap }[];
}

/** How the page makes a view. `needsResult`: whether the page computes an attention result
 *  before rendering it (the Heads views) or not (the labs, which run their own Workers). */
export interface ViewFactory<Ctx, Id extends string = string, NeedsResult extends boolean = boolean> {
  readonly id: Id;
  readonly label: string;
  readonly needsResult: NeedsResult;
  create(): View<Ctx>;
}
