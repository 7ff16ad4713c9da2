// The one loader of the wasm core in the page: each Worker (heatmaps, timing lab, split parts)
// calls loadCore() to start its own instance. The choice between the two builds is
// cpp/bindings/load_core.mjs's (relaxed SIMD where WebAssembly.validate accepts it, SIMD128 as
// the fallback; see core-build.ts); here Vite supplies both .wasm files through ?url and each
// build's glue as its own chunk, imported only when chosen (TOOLCHAIN.md: the generated glue stays
// out of public/ and node_modules).
import { loadAttnCore } from '../../../cpp/bindings/load_core.mjs';
import simdWasmUrl from '../../../build/wasm/attn_core.wasm?url';
import relaxedWasmUrl from '../../../build/wasm/attn_core_relaxed.wasm?url';
import type { AttnCore } from './attn-core';
import { preferenceFromWorkerName, type CorePreference } from './core-build';

export type { AttnCore } from './attn-core';

/** prefer: by default what this Worker's name carries (the page's ?core=), else 'auto'. */
export function loadCore(
  prefer: CorePreference = preferenceFromWorkerName(typeof self === 'undefined' ? '' : self.name),
): Promise<AttnCore> {
  return loadAttnCore({
    prefer,
    simd: { factory: () => import('../../../build/wasm/attn_core.mjs'), wasmUrl: simdWasmUrl },
    relaxed: { factory: () => import('../../../build/wasm/attn_core_relaxed.mjs'), wasmUrl: relaxedWasmUrl },
  }) as Promise<AttnCore>;
}
