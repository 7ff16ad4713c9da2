// Parts of the side-by-side pictures: a picture's largest finite value (its colour bound) and the badge rows.
import { el, fmt } from '../ui/dom';
import type { Arr, Badges } from './run';

export function maxFinite(a: Arr, abs = false): number {
  let m = 0;
  for (const x of a) if (Number.isFinite(x)) m = Math.max(m, abs ? Math.abs(x) : x);
  return m;
}

export function badgeRow(who: string, b: Badges): HTMLElement {
  const badge = (ok: boolean, text: string, key: string, value: number | string) =>
    el('span', { class: ok ? 'badge ok' : 'badge warn', 'data-badge': key, 'data-value': String(value), text });
  return el(
    'p',
    { class: 'badge-row' },
    el('strong', { text: `${who}: ` }),
    badge(b.maxRowSumError < 1e-5, `rows sum to 1: max |Σ−1| ${fmt(b.maxRowSumError)}`, 'rowsum', b.maxRowSumError),
    badge(
      b.rangeViolation <= 1e-6,
      `inside the values' range: max violation ${fmt(Math.max(0, b.rangeViolation))}`,
      'range',
      b.rangeViolation,
    ),
    badge(b.nanRows === 0, `NaN rows ${b.nanRows}`, 'nan', b.nanRows),
    badge(true, `cost ${b.cost}`, 'cost', b.cost),
  );
}
