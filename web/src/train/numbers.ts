// How the Train tab prints its numbers. Pure: no DOM. Losses and gradient norms span many decades
// (a saturated softmax gives losses near 10⁶, a diverging run 10²⁶), so large and tiny values are
// printed with three significant digits and a power of ten, never as a 27-digit decimal.

const SUP: Record<string, string> = {
  '-': '⁻',
  '0': '⁰',
  '1': '¹',
  '2': '²',
  '3': '³',
  '4': '⁴',
  '5': '⁵',
  '6': '⁶',
  '7': '⁷',
  '8': '⁸',
  '9': '⁹',
};

/** 10 to the power e, as text: 10⁵, 10⁻³. */
export function pow10(e: number): string {
  return '10' + String(e).replace(/[-0-9]/g, (c) => SUP[c]);
}

/** A value with `digits` decimals inside [1e-3, 1e4); outside, 3 significant digits · 10^e. NaN and ±∞ spelled out. */
export function num(x: number, digits = 3): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  const a = Math.abs(x);
  let s: string;
  if (x === 0) s = (0).toFixed(digits);
  else if (a >= 1e-3 && a < 1e4) s = x.toFixed(digits);
  else {
    const [m, e] = x.toExponential(2).split('e');
    s = `${m}·${pow10(Number(e))}`;
  }
  return s.startsWith('-') ? '−' + s.slice(1) : s;
}

/** 3 significant digits, exponent form outside 1e-3…1e4 (gradients span many decades). */
export function sci(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e4 ? x.toPrecision(3) : x.toExponential(2);
}

/** What became non-finite in a step, for a sentence: 'the gradient norm', 'the loss', or both. */
export function nonFiniteWhat(loss: number, gradNorm: number): string {
  const l = !Number.isFinite(loss),
    g = !Number.isFinite(gradNorm);
  return l && g ? 'the loss and the gradient norm' : l ? 'the loss' : g ? 'the gradient norm' : 'the update';
}

/**
 * A head's name in the page's text: layers and heads counted from 1, as the lessons count heads
 * ("head 1", "head 2"). Exports keep the module's 0-based indices (PNG names layer-0-head-0, the
 * JSON's [layer][head] arrays); the Train tab says so once.
 */
export function headName(layer: number, head: number, sep = ' '): string {
  return `L${layer + 1}${sep}H${head + 1}`;
}
