// How the Train tab prints its numbers. Pure: no DOM.

/** 3 significant digits, exponent form outside 1e-3…1e4 (gradients span many decades). */
export function sci(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e4 ? x.toPrecision(3) : x.toExponential(2);
}
