// The Decode stepper's pictures and words (stepper-panel.ts draws with them): the FLOPs bars, every
// head's new attention row, the K/V caches, and the step's title.
import { el, clear, fmt } from '../ui/dom';
import type { StepData, Trajectory } from './protocol';
import { drawMatrix } from './matrix';
import { dHead, stepFlops } from './model';

/** The FLOPs of the step shown, with the cache and recomputed, as bars (drawn into box). */
export function drawFlops(box: HTMLElement, tj: Trajectory, n: number, cache: boolean): void {
  const f = stepFlops(tj.shape, n);
  clear(box);
  const bar = (label: string, v: number, max: number, cls: string) => {
    const b = el('span', { class: `fbar ${cls}` });
    b.style.width = `${Math.max(0.5, (v / max) * 100).toFixed(2)}%`;
    return el(
      'div',
      { class: 'frow' },
      el('span', { class: 'flabel', text: label }),
      el('span', { class: 'ftrack' }, b),
      el('strong', { class: 'fnum', text: fmtFlops(v) }),
    );
  };
  box.append(
    el('h5', { text: `FLOPs of this step (length ${n})` }),
    bar('with the cache', f.cached, f.recompute, 'cached' + (cache ? ' on' : '')),
    bar('recompute', f.recompute, f.recompute, 'recompute' + (cache ? '' : ' on')),
    el('p', {
      class: 'muted small',
      text: `Recompute does ${fmt(f.recompute / f.cached, 1)}× the work; ${fmtFlops(f.wasted)} of it (${((f.wasted / f.recompute) * 100).toFixed(0)} %) recomputes keys, values and attention rows the previous steps already had.`,
    }),
  );
}

/** Every head's new attention row (or, recomputing, all rows again), one canvas per head. */
export function drawHeads(
  box: HTMLElement,
  width: number,
  tj: Trajectory,
  st: StepData,
  n: number,
  cache: boolean,
): void {
  const { layers: L, heads: H } = tj.shape;
  const T = tj.steps.length;
  const cell = Math.max(6, Math.min(14, Math.floor((width - 120) / T)));
  box.append(
    el('h5', {
      text: cache
        ? 'New attention row of every head over the cached keys'
        : 'Recompute: every row again (hatched = already known), the last row is new',
    }),
  );
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const c = el('canvas', { class: 'mat', 'data-testid': `decode-row-${l}-${h}`, role: 'img' });
      let arg = 0;
      for (let j = 1; j < n; j++) if (st.weights[(l * H + h) * n + j] > st.weights[(l * H + h) * n + arg]) arg = j;
      c.setAttribute(
        'aria-label',
        `Layer ${l + 1} head ${h + 1}: the new query (position ${n - 1}) puts most weight, ${fmt(st.weights[(l * H + h) * n + arg], 2)}, on position ${arg} (token ${tj.steps[arg].token}).`,
      );
      const bands = tj.firstCopy >= 0 ? [{ from: tj.firstCopy, to: tj.secondCopy, color: '#d08a00' }] : [];
      if (cache) {
        drawMatrix(c, {
          rows: 1,
          cols: T,
          filled: n,
          value: (_i, j) => st.weights[(l * H + h) * n + j],
          lo: 0,
          hi: 1,
          palette: 'seq',
          cell,
          newCol: n - 1,
          bands,
        });
      } else {
        // Row i of the prefix's attention is step i's new row (causal): the recompute redoes them all.
        drawMatrix(c, {
          rows: n,
          cols: T,
          filled: n,
          lo: 0,
          hi: 1,
          palette: 'seq',
          cell: Math.max(4, Math.min(cell, Math.floor(220 / n))),
          bands,
          value: (i, j) => (j <= i ? tj.steps[i].weights[(l * H + h) * (i + 1) + j] : NaN),
          wasted: (i) => i < n - 1,
          newRow: n - 1,
        });
      }
      box.append(
        el(
          'figure',
          { class: 'decode-head' },
          el('figcaption', { text: `L${l + 1} H${h + 1} → ${arg} (${fmt(st.weights[(l * H + h) * n + arg], 2)})` }),
          c,
        ),
      );
    }
  }
}

/** The K and V caches of every layer (and K/V head) as pictures, this step’s column outlined. */
export function drawCaches(
  box: HTMLElement,
  width: number,
  tj: Trajectory,
  st: StepData,
  n: number,
  cache: boolean,
): void {
  const { layers: L, kvHeads: G } = tj.shape;
  const dh = dHead(tj.shape);
  const T = tj.steps.length;
  const cell = Math.max(3, Math.min(8, Math.floor((width - 60) / T), Math.floor(180 / dh)));
  box.append(
    el('h5', {
      text: cache
        ? `K and V caches: d_head ${dh} rows × one column per token (outlined: this step’s)`
        : 'K and V, recomputed: every column again (hatched = waste); only the outlined one is new',
    }),
  );
  // One colour scale for all keys and one for all values (their magnitudes differ).
  const range = (arrs: Float32Array[]) => {
    let m = 1e-6;
    for (const a of arrs) for (const x of a) m = Math.max(m, Math.abs(x));
    return m;
  };
  const kr = range(st.k),
    vr = range(st.v);
  for (let l = 0; l < L; l++) {
    for (const [name, arr] of [
      ['K', st.k[l]],
      ['V', st.v[l]],
    ] as const) {
      for (let g = 0; g < G; g++) {
        const c = el('canvas', {
          class: 'mat',
          'data-testid': `decode-${name.toLowerCase()}-${l}-${g}`,
          'data-cols': n,
          role: 'img',
          'aria-label': `Layer ${l + 1} ${name} cache${G > 1 ? `, K/V head ${g + 1}` : ''}: ${n} columns of ${dh}`,
        });
        drawMatrix(c, {
          rows: dh,
          cols: T,
          filled: n,
          value: (i, j) => arr[(g * n + j) * dh + i],
          lo: -(name === 'K' ? kr : vr),
          hi: name === 'K' ? kr : vr,
          palette: 'div',
          cell,
          newCol: n - 1,
          wasted: cache ? undefined : (_i, j) => j < n - 1,
        });
        box.append(
          el(
            'figure',
            { class: 'decode-kv' },
            el('figcaption', { text: `L${l + 1} ${name}${G > 1 ? ` (K/V head ${g + 1})` : ''}` }),
            c,
          ),
        );
      }
    }
  }
}

/** "Prompt: 25 of 32 tokens, ", "Generated 2 of 7 (token 27 of 32): ", or a prompt token's. */
export function stepTitle(n: number, tj: Trajectory): string {
  const T = tj.steps.length,
    P = tj.promptLen;
  if (n === P) return `Prompt: ${P} of ${T} tokens, `;
  if (n < P) return `Prompt token ${n} of ${P}: `;
  return `Generated ${n - P} of ${T - P} (token ${n} of ${T}): `;
}

function fmtFlops(v: number): string {
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GFLOP`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} MFLOP`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} kFLOP`;
  return `${v} FLOP`;
}
