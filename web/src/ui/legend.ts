// Colour legend: a viridis bar with ticks, plus swatches for masked and NaN cells.
import { VIRIDIS_LUT, MASKED_RGB, NAN_RGB } from './colormap';
import { el, fmt } from './dom';

export function legend(
  opts: { lo?: number; hi?: number; title?: string; masked?: boolean; nan?: boolean } = {},
): HTMLElement {
  const lo = opts.lo ?? 0;
  const hi = opts.hi ?? 1;
  const bar = el('canvas', { class: 'legend-bar', width: 256, height: 1, 'aria-hidden': 'true' });
  const ctx = bar.getContext('2d');
  if (ctx) {
    const img = ctx.createImageData(256, 1);
    for (let i = 0; i < 256; i++) {
      img.data[i * 4] = VIRIDIS_LUT[i * 3];
      img.data[i * 4 + 1] = VIRIDIS_LUT[i * 3 + 1];
      img.data[i * 4 + 2] = VIRIDIS_LUT[i * 3 + 2];
      img.data[i * 4 + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
  }
  const ticks = el('div', { class: 'legend-ticks', 'aria-hidden': 'true' });
  for (const t of tickLabels(lo, hi)) ticks.append(el('span', { text: t }));
  const swatch = (rgb: number[], label: string, cls: string) =>
    el('span', { class: 'legend-swatch' }, swatchBox(rgb, cls), el('span', { text: label }));
  return el(
    'div',
    {
      class: 'legend',
      role: 'img',
      'aria-label': `Colour scale viridis from ${fmt(lo, 2)} (dark purple) to ${fmt(hi, 2)} (yellow)${opts.masked !== false ? '; masked cells are hatched grey' : ''}${opts.nan !== false ? '; NaN cells are crimson with a cross' : ''}.`,
    },
    el('span', { class: 'legend-title', text: opts.title ?? 'weight' }),
    el('span', { class: 'legend-scale' }, bar, ticks),
    opts.masked !== false ? swatch(MASKED_RGB, 'masked (forbidden)', 'sw-masked') : null,
    opts.nan !== false ? swatch(NAN_RGB, 'NaN', 'sw-nan') : null,
  );
}

/** The n + 1 tick labels from lo to hi, with as many decimals as it takes (2 to 4) for them to
 *  differ, else in scientific form: a |Δ| scale up to 0.01 reads 0.000 0.003 … 0.010, not
 *  0.00 0.00 0.00 0.00 0.01. */
export function tickLabels(lo: number, hi: number, n = 4): string[] {
  const vals = Array.from({ length: n + 1 }, (_, k) => lo + ((hi - lo) * k) / n);
  if (hi - lo >= 10) return vals.map((v) => fmt(v, 0));
  for (let d = 2; d <= 4; d++) {
    const t = vals.map((v) => fmt(v, d));
    if (!(hi > lo) || new Set(t).size === t.length) return t;
  }
  return vals.map((v) => (v === 0 ? '0' : v.toExponential(1).replace('-', '−')));
}

function swatchBox(rgb: number[], cls: string): HTMLElement {
  const b = el('span', { class: `sw ${cls}`, 'aria-hidden': 'true' });
  b.style.backgroundColor = `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
  return b;
}
