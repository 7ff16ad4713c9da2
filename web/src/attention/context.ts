// What the attention views (Heads, Mask effect, Scale, Output) are given by the page: the model
// and the zoomed head, the computed result, and the compute client (the Scale view asks it for
// its study). The page's context satisfies this structurally (app/features.ts).
import type { LabContext } from '../ui/view';
import type { AttentionResult } from './protocol';
import type { ModelState } from './state';
import type { ComputeClient } from './worker-client';

/** The part of the page's state the attention views read. */
export interface AttentionSlice {
  model: ModelState;
  page: { head: number };
}

export interface AttentionContext extends LabContext<AttentionSlice, { model?: Partial<ModelState>; page?: { head?: number } }> {
  /** The page's compute client (the Scale view asks it for its study). */
  client: Pick<ComputeClient, 'study'>;
  result: AttentionResult;
  /** Uint8Array(T*T), 1 = forbidden by the mask. */
  forbidden: Uint8Array;
  selectHead(h: number): void;
}
