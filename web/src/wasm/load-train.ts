// Loads the training module (attn_train) in a Worker; the .wasm comes through Vite's ?url. The one
// loader of this module (the Train and Decode Workers both use it); its types are attn-train.d.ts.
import createAttnTrain from '../../../build/wasm/attn_train.mjs';
import wasmUrl from '../../../build/wasm/attn_train.wasm?url';
import type { AttnTrainLib } from './attn-train';

export type { AttnTrainLib, AttnTrainer, AttnTrainDecoder, AttnStepBatch, AttnShardResult } from './attn-train';

export function loadTrain(): Promise<AttnTrainLib> {
  return createAttnTrain({ locateFile: () => wasmUrl });
}
