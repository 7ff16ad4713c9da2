// The page's mask settings in the form the core takes. The mask rule itself lives in the core
// (core.allowedMask / core.keyRanges, docs/js-api.md); the page draws what the core returns.

/** Key padding as the core wants it: Uint8Array(T), 1 = real token, 0 = padding. */
export function keyPadding(t: number, pad: readonly number[]): Uint8Array {
  const k = new Uint8Array(t).fill(1);
  for (const p of pad) if (p >= 0 && p < t) k[p] = 0;
  return k;
}
