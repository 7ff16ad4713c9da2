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
  const { labels, times } = tickScale(lo, hi);
  for (const t of labels) ticks.append(el('span', { text: t }));
  const swatch = (rgb: number[], label: string, cls: string) =>
    el('span', { class: 'legend-swatch' }, swatchBox(rgb, cls), el('span', { text: label }));
  return el(
    'div',
    {
      class: 'legend',
      role: 'img',
      'aria-label': `Colour scale viridis from ${fmt(lo, 2)} (dark purple) to ${fmt(hi, 2)} (yellow)${opts.masked !== false ? '; masked cells are hatched grey' : ''}${opts.nan !== false ? '; NaN cells are crimson with a cross' : ''}.`,
    },
    el('span', { class: 'legend-title', text: (opts.title ?? 'weight') + (times ? ` (${times})` : '') }),
    el('span', { class: 'legend-scale' }, bar, ticks),
    opts.masked !== false ? swatch(MASKED_RGB, 'masked (forbidden)', 'sw-masked') : null,
    opts.nan !== false ? swatch(NAN_RGB, 'NaN', 'sw-nan') : null,
  );
}

/** The n + 1 tick labels from lo to hi, with as many decimals as it takes (2 to 4) for them to
 *  differ: a |Δ| scale up to 0.01 reads 0.000 0.003 … 0.010, not 0.00 0.00 0.00 0.00 0.01. Smaller
 *  ranges get one power of ten for the whole scale (`times`, e.g. "×1e−7", said beside the title),
 *  so five short labels fit a 180-px legend: −1.0 −0.5 0.0 0.5 1.0. */
export function tickScale(lo: number, hi: number, n = 4): { labels: string[]; times: string | null } {
  const vals = Array.from({ length: n + 1 }, (_, k) => lo + ((hi - lo) * k) / n);
  if (hi - lo >= 10) return { labels: vals.map((v) => fmt(v, 0)), times: null };
  for (let d = 2; d <= 4; d++) {
    const t = vals.map((v) => fmt(v, d));
    if (!(hi > lo) || new Set(t).size === t.length) return { labels: t, times: null };
  }
  const e = Math.floor(Math.log10(Math.max(Math.abs(lo), Math.abs(hi))));
  const scaled = vals.map((v) => v / 10 ** e);
  for (let d = 1; d <= 3; d++) {
    const t = scaled.map((v) => fmt(v, d));
    if (new Set(t).size === t.length || d === 3) return { labels: t, times: `×1e${e < 0 ? '−' : ''}${Math.abs(e)}` };
  }
  return { labels: [], times: null }; // not reached
}

/** tickScale's labels alone. */
export const tickLabels = (lo: number, hi: number, n = 4): string[] => tickScale(lo, hi, n).labels;

function swatchBox(rgb: number[], cls: string): HTMLElement {
  const b = el('span', { class: `sw ${cls}`, 'aria-hidden': 'true' });
  b.style.backgroundColor = `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
  return b;
}
