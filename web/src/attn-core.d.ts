// Types for the Emscripten ES module built from cpp/ (see docs/js-api.md).
declare module '*/build/wasm/attn_core.mjs' {
  const createAttnCore: (opts?: Record<string, unknown>) => Promise<unknown>;
  export default createAttnCore;
}
