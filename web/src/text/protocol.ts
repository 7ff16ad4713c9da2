// Messages between the Text model tab and its Worker (text/worker.ts). Plain data.
import type { TextWeights } from './model-files';
import type { AblationMeasures, GenOptions, GenRun, ProbeSpec, RoleTable, TextRun } from './runner';

export type TextRequest =
  /** Start loading the training module now (no reply): the view sends it as it opens, so the
   *  module compiles while model.json and the checkpoint are fetched. */
  | { kind: 'warm'; id: number }
  /** Make the trainer of a checkpoint (`key` names it in the replies). */
  | { kind: 'load'; id: number; key: string; config: Record<string, unknown>; weights: TextWeights }
  /** The forward of a text on the loaded checkpoint, with these heads knocked out. */
  | { kind: 'run'; id: number; key: string; ids: Int32Array; ablated: [number, number][] }
  /** Held-out loss and in-context score, intact and with these heads knocked out. */
  | {
      kind: 'measure';
      id: number;
      key: string;
      windows: Int32Array;
      probe: ProbeSpec;
      ablated: [number, number][];
    }
  /** n tokens after `ids` ("Continue the text"). */
  | {
      kind: 'generate';
      id: number;
      key: string;
      ids: Int32Array;
      n: number;
      opts: GenOptions;
      ablated: [number, number][];
    };

export type TextReply =
  | { kind: 'loaded'; id: number; key: string; roles: RoleTable }
  | { kind: 'result'; id: number; key: string; run: TextRun }
  | { kind: 'generated'; id: number; key: string; gen: GenRun }
  | { kind: 'measured'; id: number; key: string; measures: AblationMeasures }
  /** A refusal: `field` is the module's (AttnError.field) when it has one. */
  | { kind: 'error'; id: number; message: string; field: string | null };
