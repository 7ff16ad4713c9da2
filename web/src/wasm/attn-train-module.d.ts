// The training module (build/wasm/attn_train.mjs) is generated and untyped; this gives its
// default export the types of wasm/attn-train.d.ts.
declare module '*/build/wasm/attn_train.mjs' {
  const createAttnTrain: import('./attn-train').CreateAttnTrain;
  export default createAttnTrain;
}
