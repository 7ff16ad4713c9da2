// The one loader of the wasm core in the page: each Worker (heatmaps, timing lab, split parts)
// calls loadCore() to start its own instance. The .wasm file comes through Vite's ?url (see
// TOOLCHAIN.md: the generated glue stays out of public/ and node_modules).
import createAttnCore from '../../../build/wasm/attn_core.mjs';
import wasmUrl from '../../../build/wasm/attn_core.wasm?url';
import type { AttnCore } from './attn-core';

export type { AttnCore } from './attn-core';

export function loadCore(): Promise<AttnCore> {
  return createAttnCore({ locateFile: () => wasmUrl });
}
