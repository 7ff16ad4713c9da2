// The Emscripten ES module built from cpp/ (build/wasm/attn_core.mjs) is generated and untyped;
// this gives its default export the types of core/attn-core.d.ts, so importing it needs no cast.
declare module '*/build/wasm/attn_core.mjs' {
  const createAttnCore: import('./attn-core').CreateAttnCore;
  export default createAttnCore;
}
