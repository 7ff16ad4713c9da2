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

/** How the page makes a view. `needsResult`: whether the view is drawn from a result its
 *  feature's ResultController computes (the attention views) or renders at once (the labs, which
 *  run their own Workers). */
export interface ViewFactory<Ctx, Id extends string = string, NeedsResult extends boolean = boolean> {
  readonly id: Id;
  readonly label: string;
  readonly needsResult: NeedsResult;
  create(): View<Ctx>;
}

/** The page's side of the feature that computes for its views (needsResult: true): one per page,
 *  made by the feature (attention/controller.ts, listed in app/features.ts). The page lays out its
 *  panels, tells it of every state change and asks it to draw the current view; the controller
 *  owns the computation, the result on screen and the panels around the view. `V`: the views it
 *  draws. */
export interface ResultController<S, V> {
  /** Panels the page lays out: in the side column, beside the tabs, above and below the view. */
  readonly panels: { aside: HTMLElement; head: HTMLElement; above: HTMLElement[]; below: HTMLElement[] };
  /** A new (normalised) state: true when it asked for a computation (drawn when it lands), false
   *  when the page should redraw now. */
  changed(prev: S, next: S): boolean;
  /** Draw `view` (current, already in the page's view host), or hide the panels for a view of
   *  another feature (null). */
  render(view: V | null): void;
  /** The first computation (once, after the page's first draw). */
  start(): void;
  /** Computing, or a result waiting for its Check: the page is not ready. */
  readonly busy: boolean;
  /** The Worker is computing. */
  readonly computing: boolean;
  /** The last computation was refused (its banner shows): the page reports failure. */
  readonly failed: boolean;
  /** A result is on screen. */
  readonly hasResult: boolean;
}
