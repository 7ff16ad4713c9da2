// The banner over the views when the core returned NaN rows: how many, where, why, and the fix.
import { el } from '../ui/dom';
import { FILL_LABEL, type ModelSlice } from './state';
import type { AttentionResult } from './protocol';

export function createNanBanner(): {
  root: HTMLElement;
  update(r: AttentionResult, s: ModelSlice): void;
  hide(): void;
} {
  const root = el('div', { class: 'banner nan', role: 'status', 'data-testid': 'nan-banner', hidden: true });
  return {
    root,
    update(r, s) {
      const counts = r.nanRowsPerHead; // the core's count
      const total = counts.reduce((a, b) => a + b, 0);
      root.hidden = total === 0;
      if (total === 0) return;
      const rows = counts[0];
      const per = counts.every((c) => c === rows)
        ? `${rows} of ${r.t} rows in every head`
        : counts.map((c, h) => `head ${h + 1}: ${c}`).join(', ');
      root.textContent = '';
      // The student's arrays carry their own cause (a NaN cell, an inverted mask: arrays-compute.ts);
      // the page's example gets NaN rows only from a fully masked row under the −∞ fill.
      const cause =
        r.arrays?.nanCause ??
        `Every key in those rows is masked and the fill is ${FILL_LABEL[s.model.fill].split(' ')[0]}, so the softmax computes exp(−∞ − (−∞)) = NaN. Try the −1e9 fill (uniform rows) or the zero-row fill.`;
      root.append(el('strong', { text: `NaN rows: ${per}. ` }), el('span', { text: cause }));
    },
    hide() {
      root.hidden = true;
    },
  };
}
