// Viridis colour map as a 256-entry RGB lookup table.
// Source: matplotlib's "viridis" (Stéfan van der Walt and Nathaniel Smith, 2015, CC0), sampled
// at t = 0, 0.1, …, 1.0 — the 11 published control points below — and linearly interpolated
// in sRGB. Viridis is perceptually uniform and readable with the common colour-vision deficiencies.
export const VIRIDIS_CONTROL_POINTS = [
  '#440154',
  '#482475',
  '#414487',
  '#355f8d',
  '#2a788e',
  '#21918c',
  '#22a884',
  '#44bf70',
  '#7ad151',
  '#bddf26',
  '#fde725',
] as const;

/** Colour of a forbidden (masked) cell: a light neutral, far from every viridis colour. */
export const MASKED_RGB: [number, number, number] = [232, 228, 220];
/** Colour of a NaN cell: a strong crimson, outside the viridis ramp. */
export const NAN_RGB: [number, number, number] = [214, 36, 110];

function hexToRgb(h: string): [number, number, number] {
  return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
}

/** Build an n-entry LUT (Uint8Array of n*3) from control points spread evenly over [0, 1]. */
export function buildLut(points: readonly string[], n = 256): Uint8Array {
  const rgb = points.map(hexToRgb);
  const lut = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    const t = (i / (n - 1)) * (rgb.length - 1);
    const k = Math.min(Math.floor(t), rgb.length - 2);
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(rgb[k][c] + (rgb[k + 1][c] - rgb[k][c]) * f);
  }
  return lut;
}

export const VIRIDIS_LUT = buildLut(VIRIDIS_CONTROL_POINTS);

/** Index into the LUT for value v mapped from [lo, hi]. */
export function lutIndex(v: number, lo: number, hi: number): number {
  const span = hi - lo;
  const t = span > 0 ? (v - lo) / span : 0.5;
  return Math.max(0, Math.min(255, Math.round(t * 255)));
}

export function cssColor(v: number, lo = 0, hi = 1): string {
  const i = lutIndex(v, lo, hi) * 3;
  return `rgb(${VIRIDIS_LUT[i]}, ${VIRIDIS_LUT[i + 1]}, ${VIRIDIS_LUT[i + 2]})`;
}

/** Text colour readable on top of the colour for v (dark text on the light end). */
export function inkFor(v: number, lo = 0, hi = 1): string {
  return lutIndex(v, lo, hi) > 150 ? '#111' : '#fff';
}
