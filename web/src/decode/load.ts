// Loads the training module (attn_train) in a Worker; the .wasm comes through Vite's ?url. Its
// types are train/attn-train.d.ts (shared with the Train tab).
import createAttnTrain from '../../../build/wasm/attn_train.mjs';
import wasmUrl from '../../../build/wasm/attn_train.wasm?url';
import type { AttnTrainLib } from '../train/attn-train';

export type { AttnTrainLib, AttnTrainer, AttnTrainDecoder } from '../train/attn-train';

export function loadTrain(): Promise<AttnTrainLib> {
  return createAttnTrain({ locateFile: () => wasmUrl });
}
