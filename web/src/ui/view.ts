// The view (tab) system. A view is a self-contained module with a root element and a render
// function; the page owns state, compute and URL. Add a view (e.g. a timing lab) by writing a
// module that exports a ViewFactory, listing it in app/views.ts and its id in app/state.ts VIEWS.
import type { Patch, State, ViewId } from '../app/state';
import type { AttentionResult } from '../core/protocol';
import type { Heatmap } from './heatmap';
import type { ComputeClient } from '../core/worker-client';

/** What every view gets. A view whose factory has needsResult: false gets only this. */
export interface BaseViewContext {
  state: State;
  /** Speak a sentence through the page's aria-live region. */
  announce(text: string): void;
  client: ComputeClient;
  /** Width available to the view, CSS px. */
  width: number;
  /** Change the page's state (normalised, written to the URL). */
  update(patch: Patch): void;
}

export interface ViewContext extends BaseViewContext {
  result: AttentionResult;
  /** Uint8Array(T*T), 1 = forbidden by the mask. */
  forbidden: Uint8Array;
  selectHead(h: number): void;
}

export interface View {
  readonly id: ViewId;
  readonly root: HTMLElement;
  render(ctx: ViewContext): void;
  /** Heatmaps a PNG export can offer, by name. */
  heatmaps(): { name: string; heatmap: Heatmap }[];
}

export interface ViewFactory {
  id: ViewId;
  label: string;
  /** Whether the view needs an attention result to render (a timing lab would not). */
  needsResult: boolean;
  create(): View;
}
