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
// What cpp/tools/core_tables.mjs writes beside attn_core.mjs when it is built: core.names and the
// variants the core refuses (read by core-tables.ts, so the page corrects a link before any core
// has loaded without a copy of the core's rule).
declare module '*/build/wasm/attn_core_tables.mjs' {
  const tables: {
    names: import('./attn-core').CoreNames;
    variant: {
      /** [option, every value it takes], the last varying fastest; 'dkOdd' is d_k's parity. */
      axes: [string, (string | boolean)[]][];
      /** One character per combination: '-' accepted, else the index of the axis refused. */
      refused: string;
    };
  };
  export default tables;
}
