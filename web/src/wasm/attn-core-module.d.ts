// The Emscripten ES modules built from cpp/ (build/wasm/attn_core.mjs and its relaxed-SIMD twin
// attn_core_relaxed.mjs, same API) are generated and untyped; this gives their default export the
// types of wasm/attn-core.d.ts, so importing them needs no cast.
declare module '*/build/wasm/attn_core.mjs' {
  const createAttnCore: import('./attn-core').CreateAttnCore;
  export default createAttnCore;
}
declare module '*/build/wasm/attn_core_relaxed.mjs' {
  const createAttnCore: import('./attn-core').CreateAttnCore;
  export default createAttnCore;
}
