// Gives the generated training module's default export the types of decode/attn-train.d.ts.
declare module '*/build/wasm/attn_train.mjs' {
  const createAttnTrain: import('./attn-train').CreateAttnTrain;
  export default createAttnTrain;
}
