// What the attention views (Heads, Mask effect, Scale, Output) are given: the page's part (the
// model and the zoomed head, the compute client: the Scale view asks it for its study) and the
// controller's (attention/controller.ts: the computed result, the mask, head selection). The
// page's context with the controller's parts satisfies this structurally (app/features.ts).
import type { LabContext } from '../ui/view';
import type { AttentionResult } from './protocol';
import type { ModelState } from './state';
import type { ComputeClient } from './worker-client';

/** The part of the page's state the attention views read. */
export interface AttentionSlice {
  model: ModelState;
  /** head: the zoomed head; cell: the cell "Why this weight?" takes apart ([head, query, key] or []);
   *  qsel, ksel: the zoomed head's selected queries and keys (the Selection panel). */
  page: { head: number; cell?: number[]; qsel?: number[]; ksel?: number[]; wif?: string };
}

/** What the controller adds to the page's context when it draws one of these views. */
export interface ResultParts {
  result: AttentionResult;
  /** Uint8Array(T*T), 1 = forbidden by the mask. */
  forbidden: Uint8Array;
  selectHead(h: number): void;
}

export interface AttentionContext
  extends
    LabContext<
      AttentionSlice,
      {
        model?: Partial<ModelState>;
        page?: { head?: number; cell?: number[]; qsel?: number[]; ksel?: number[]; wif?: string };
      }
    >,
    ResultParts {
  /** The page's compute client (the Scale view asks it for its study). */
  client: Pick<ComputeClient, 'study'>;
}
