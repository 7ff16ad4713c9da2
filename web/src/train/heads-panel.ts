// The Train tab's "Heads now" panel: each head's previous-token, induction and duplicate-token
// scores, the held-out loss without it (the ablate buttons) and the K-composition maps between
// consecutive layers.
import { el, clear, fmt } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import { legend } from '../ui/legend';
import type { HeadScores } from './protocol';
import { HEAD_COLORS, swatch } from './live-charts';
import type { TrainSession } from './session';
import { headName, num } from './numbers';

export class HeadsPanel {
  readonly root: HTMLElement;
  readonly table = el('table', { class: 'tr-heads', 'data-testid': 'train-heads' });
  private kcompBox = el('div', { class: 'tr-kcomp' });
  kcompMaps: { name: string; heatmap: Heatmap }[] = [];

  constructor(
    private readonly s: TrainSession,
    private readonly readout: HTMLElement,
  ) {
    this.root = el(
      'section',
      { class: 'tr-panel', 'aria-label': 'Heads: scores, ablation and K-composition' },
      el('h3', { text: 'Heads now: click to ablate' }),
      el('div', { class: 'tr-heads-scroll' }, this.table),
      el('h4', { text: 'K-composition (layer l head → layer l+1 head)' }),
      // A fixed 0…1 scale (the score is a ratio of norms in [0, 1]), so maps of different steps compare.
      el(
        'div',
        { class: 'tr-kcomp-legend', 'data-testid': 'train-kcomp-legend' },
        legend({ lo: 0, hi: 1, title: 'K-composition', masked: false, nan: false }),
      ),
      this.kcompBox,
    );
  }

  build(): void {
    const { L, H } = this.s.dims();
    clear(this.kcompBox);
    this.kcompMaps = [];
    for (let l = 0; l + 1 < L; l++) {
      const hm = new Heatmap({
        label: `K-composition from layer ${l + 1} heads into layer ${l + 2} heads`,
        maxSize: Math.min(160, 40 * H),
        showLabels: true,
        interactive: true,
        axisTitles: [`layer ${l + 2} head →`, `layer ${l + 1} head ↓`],
        describe: (i, j, v) =>
          `layer ${l + 1} head ${i + 1} → layer ${l + 2} head ${j + 1}: K-composition ${fmt(v, 3)}`,
        onCell: (text) => (this.readout.textContent = text),
      });
      this.kcompMaps.push({ name: `kcomp-layer-${l}-to-${l + 1}`, heatmap: hm });
      this.kcompBox.append(hm.root);
    }
    if (L < 2) this.kcompBox.append(el('p', { class: 'muted', text: 'One layer: no composition.' }));
  }

  draw(sc: HeadScores): void {
    const { L, H } = this.s.dims();
    for (let l = 0; l + 1 < L; l++) {
      const v = sc.kComposition.subarray(l * H * H, (l + 1) * H * H);
      const lab = Array.from({ length: H }, (_, h) => `h${h + 1}`);
      this.kcompMaps[l]?.heatmap.update({ rows: H, cols: H, values: v, lo: 0, hi: 1, rowLabels: lab, colLabels: lab });
    }
    this.drawTable(sc);
  }

  private drawTable(sc: HeadScores): void {
    const { L, H } = this.s.dims();
    clear(this.table);
    // The deltas are against the model as it is now: with the heads already ablated switched off.
    const n = this.s.ablated.size;
    const against =
      n === 0
        ? 'the intact model'
        : `the model with ${n === 1 ? 'the ablated head' : `the ${n} ablated heads`} already off (not the intact model)`;
    this.table.append(
      el('caption', {
        class: 'muted',
        'data-testid': 'train-heads-caption',
        text: `At step ${sc.step}. Held-out loss ${num(sc.loss)}; “without” = the loss with that head's output also zeroed, and its change (Δ) against ${against}.`,
      }),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['head', 'prev', 'induct', 'dup', 'without (Δ)', ''].map((t) => el('th', { scope: 'col', text: t })),
        ),
      ),
    );
    const body = el('tbody');
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const k = l * H + h;
        const key = `${l}-${h}`;
        const on = this.s.ablated.has(key);
        const b = el('button', {
          type: 'button',
          class: 'btn small' + (on ? ' tr-ablated' : ''),
          'data-testid': `train-ablate-${key}`,
          'aria-pressed': on ? 'true' : 'false',
          text: on ? 'restore' : 'ablate',
          'aria-label': `${on ? 'Restore' : 'Ablate'} layer ${l + 1} head ${h + 1}`,
        });
        b.addEventListener('click', () => this.s.toggleAblation(l, h));
        const cell = (v: number) => el('td', { text: fmt(v, 2), class: v >= 0.5 ? 'tr-strong' : '' });
        body.append(
          el(
            'tr',
            {},
            el('th', { scope: 'row' }, swatch(HEAD_COLORS[k % HEAD_COLORS.length]), headName(l, h)),
            cell(sc.previousToken[k]),
            cell(sc.induction[k]),
            cell(sc.duplicateToken[k]),
            el(
              'td',
              { class: 'tr-without' },
              num(sc.ablationLoss[k]),
              el('span', {
                class: 'tr-delta',
                text: ` (${sc.ablationLoss[k] - sc.loss >= 0 ? '+' : ''}${num(sc.ablationLoss[k] - sc.loss, 2)})`,
              }),
            ),
            el('td', {}, b),
          ),
        );
      }
    }
    this.table.append(body);
  }
}
