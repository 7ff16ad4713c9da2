// The Train tab's probe panel: every head's attention on a probe sequence (the held-out one or
// the user's own tokens), with the mean row entropy and the gradient reaching the scores, and the
// "Open in Heads view" hand-off. Maps are rebuilt when the probe, the model or the width changes.
import { el, clear, fmt } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import type { Snapshot } from './protocol';
import { labelled, smallButton } from './controls';
import type { TrainSession } from './session';
import { headName, sci } from './numbers';
import { tokenLabel } from '../shared/trained-model';

export interface ProbeActions {
  useProbe(text: string | null): void;
  openInHeads(): void;
}

export class ProbePanel {
  readonly root: HTMLElement;
  readonly attnGrid = el('div', { class: 'tr-attn-grid' });
  /** hover/keyboard readout, shared with the K-composition maps */
  readonly readout = el('p', {
    class: 'readout',
    'aria-live': 'polite',
    'data-testid': 'train-readout',
    text: 'Hover a cell (or focus a map and use the arrow keys) to read a weight.',
  });
  maps: { name: string; heatmap: Heatmap }[] = [];
  builtWidth = 0;
  private probeInput = el('input', {
    type: 'text',
    'data-testid': 'train-probe',
    spellcheck: 'false',
    placeholder: 'e.g. 5 9 2 7 5 9 2 7',
    'aria-label': 'Your own probe: token ids separated by spaces',
  });
  private entropyLine = el('p', { class: 'tr-caption muted', 'data-testid': 'train-entropy' });
  private scoreGradLine = el('p', { class: 'tr-caption muted', 'data-testid': 'train-score-grad' });

  constructor(
    private readonly s: TrainSession,
    act: ProbeActions,
  ) {
    this.root = el(
      'section',
      { class: 'tr-panel tr-wide', 'aria-label': 'Attention on the probe sequence' },
      el('h3', { text: 'Every head on a probe sequence' }),
      el('p', {
        class: 'tr-caption muted',
        text: 'Rows are queries, columns keys, each labelled with its token (t5 = token id 5) and its position; the probe is a held-out [noise, s, s] sequence (targets marked ·).',
      }),
      el(
        'div',
        { class: 'tr-probe-row' },
        labelled('Your own probe (token ids)', this.probeInput),
        smallButton('Use', 'train-probe-use', () => act.useProbe(this.probeInput.value)),
        smallButton('Held-out probe', 'train-probe-reset', () => {
          this.probeInput.value = '';
          act.useProbe(null);
        }),
        smallButton('Open in Heads view', 'train-open-heads', () => act.openInHeads()),
      ),
      this.attnGrid,
      this.readout,
      this.entropyLine,
      this.scoreGradLine,
    );
  }

  /** One map per layer × head, sized to the width. */
  build(width: number): void {
    const { L, H, T } = this.s.dims();
    clear(this.attnGrid);
    this.maps = [];
    this.builtWidth = width;
    // H maps per row (one per layer) while each can be at least 150 px; else fewer per row
    const perRow = Math.max(1, Math.min(H, Math.floor((width - 20) / 230)));
    // At least 120 px (a short probe's labels stay readable) where the width allows it: in a
    // 200-px frame a fixed floor pushed the maps past the edge.
    const avail = Math.floor((width - 20) / perRow) - 80;
    const size = Math.max(48, Math.min(Math.max(120, Math.min(T * 12, 300)), avail));
    this.attnGrid.style.setProperty('--tr-cols', String(perRow));
    const probe = () => this.s.probe;
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const name = `layer-${l}-head-${h}`;
        const hm = new Heatmap({
          label: `Layer ${l + 1} head ${h + 1} attention on the probe`,
          maxSize: size,
          showLabels: true,
          interactive: true,
          describe: (i, j, v, f) =>
            f
              ? `${headName(l, h)}: query ${probe()[i]} (pos ${i}) → key ${probe()[j]} (pos ${j}): masked (causal)`
              : `${headName(l, h)}: query ${probe()[i]} (pos ${i}) → key ${probe()[j]} (pos ${j}): ${fmt(v, 3)}`,
          onCell: (text) => (this.readout.textContent = text),
        });
        this.maps.push({ name, heatmap: hm });
        this.attnGrid.append(
          el(
            'figure',
            { class: 'tr-head', 'data-head': `${l}-${h}` },
            el('figcaption', { text: `layer ${l + 1} · head ${h + 1}` }),
            hm.root,
          ),
        );
      }
    }
  }

  draw(snap: Snapshot): void {
    const { L, H, T } = this.s.dims();
    // "t" + token id (tokenLabel, as the Heads view labels the trained model's tokens too).
    const labels = Array.from(this.s.probe, (tok, i) => `${tokenLabel(tok)}${this.s.probeMask[i] ? '·' : ''}`);
    const forbidden = new Uint8Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) forbidden[i * T + j] = 1;
    const ents: string[] = [];
    for (let k = 0; k < L * H; k++) {
      const values = snap.attention.subarray(k * T * T, (k + 1) * T * T);
      this.maps[k].heatmap.update({
        rows: T,
        cols: T,
        values,
        forbidden,
        lo: 0,
        hi: 1,
        rowLabels: labels,
        colLabels: labels,
      });
      let e = 0;
      for (let i = 0; i < T; i++)
        for (let j = 0; j <= i; j++) {
          const p = values[i * T + j];
          if (p > 0) e -= p * Math.log(p);
        }
      ents.push(`${headName(Math.floor(k / H), k % H, '')} ${fmt(e / T, 2)}`);
    }
    this.entropyLine.textContent = `Mean attention entropy per row (nats; uniform over the keys would be up to ln ${T} = ${fmt(Math.log(T), 2)}): ${ents.join(' · ')}`;
    // The gradient that reaches the scores, from the module's backward pass on the held-out batch.
    const sg = Array.from(snap.scoreGrad, (g, k) => `${headName(Math.floor(k / H), k % H, '')} ${sci(g)}`);
    const wq = Array.from(snap.wqGradNorm, (g, l) => `L${l + 1} ${sci(g)}`);
    this.scoreGradLine.textContent = `Gradient reaching the scores, mean |∂loss/∂S| over the causal cells of the held-out batch (S = the softmax input): ${sg.join(' · ')}. For scale: ‖∂loss/∂W_Q‖ per layer ${wq.join(' · ')}.`;
  }
}
