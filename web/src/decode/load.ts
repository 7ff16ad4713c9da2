// Loads the training module (attn_train) in a Worker; the .wasm comes through Vite's ?url.
import createAttnTrain from '../../../build/wasm/attn_train.mjs';
import wasmUrl from '../../../build/wasm/attn_train.wasm?url';
import type { AttnTrain } from './attn-train';

export type { AttnTrain, AttnTrainer, AttnTrainDecoder } from './attn-train';

export function loadTrain(): Promise<AttnTrain> {
  return createAttnTrain({ locateFile: () => wasmUrl });
}
