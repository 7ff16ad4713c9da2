// What the model predicts from its logits (the training module returns logits only): a softmax
// per position in float64 (the row maximum subtracted first), the top k next tokens, and the
// log-probability of each actual next token. No DOM.

/** log p of every token of a (V) logits row at `row`: x − max − log Σ exp(x − max), float64. */
export function logSoftmaxRow(logits: ArrayLike<number>, row: number, V: number): Float64Array {
  const off = row * V;
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, logits[off + v]);
  let s = 0;
  for (let v = 0; v < V; v++) s += Math.exp(logits[off + v] - m);
  const lse = m + Math.log(s);
  const out = new Float64Array(V);
  for (let v = 0; v < V; v++) out[v] = logits[off + v] - lse;
  return out;
}

export interface NextToken {
  id: number;
  p: number;
}

/** The k most probable next tokens after position `row`, most probable first (ties: smaller id). */
export function topK(logits: ArrayLike<number>, row: number, V: number, k = 5): NextToken[] {
  const lp = logSoftmaxRow(logits, row, V);
  const ids = Array.from({ length: V }, (_, i) => i);
  ids.sort((a, b) => lp[b] - lp[a] || a - b);
  return ids.slice(0, Math.min(k, V)).map((id) => ({ id, p: Math.exp(lp[id]) }));
}

/** (t − 1) log p(ids[i] | ids[< i]) for i = 1 … t − 1: row i − 1 of the (t, V) logits. */
export function nextLogprobs(logits: ArrayLike<number>, ids: ArrayLike<number>, V: number): Float64Array {
  const t = ids.length;
  const out = new Float64Array(Math.max(0, t - 1));
  for (let i = 1; i < t; i++) out[i - 1] = logSoftmaxRow(logits, i - 1, V)[ids[i]];
  return out;
}

/** Mean of −log p (nats per predicted token); NaN for none. */
export function meanSurprise(logprobs: ArrayLike<number>): number {
  if (logprobs.length === 0) return NaN;
  let s = 0;
  for (let i = 0; i < logprobs.length; i++) s -= logprobs[i];
  return s / logprobs.length;
}
