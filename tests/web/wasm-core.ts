// The page's wasm core (build/wasm/attn_core.mjs and .wasm, as the page loads it) in Node, for the
// vitest files that run the page's own paths against it.
import type { AttnCore, CreateAttnCore } from '../../web/src/wasm/attn-core';

const MJS = new URL('../../build/wasm/attn_core.mjs', import.meta.url).href;
const WASM = new URL('../../build/wasm/attn_core.wasm', import.meta.url);

export async function loadWasmCore(): Promise<AttnCore> {
  const fs = await import(/* @vite-ignore */ 'node:' + 'fs');
  const { default: create } = (await import(/* @vite-ignore */ MJS)) as { default: CreateAttnCore };
  return create({ wasmBinary: fs.readFileSync(WASM) });
}
