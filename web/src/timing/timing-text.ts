// The Timing lab's words (timing-view.ts shows them): the sweep's caption, the lesson loop's note
// (projections against scores, and the ratios measured) and the explainer under the results.
import { el } from '../ui/dom';
import type { SweepParams } from '../measure/model';
import type { TimingSession } from './session';

/** The sweep in one line, for the caption above the results. */
export function describe(p: SweepParams): string {
  const shape =
    p.mode === 'proj'
      ? `X (T × ${p.dModel}) projected to d_k = ${p.dk}, core.multiHeadAttention`
      : `random Q, K, V (d_k = ${p.dk}), core.attention`;
  const w = p.workers ?? 1;
  const split = w > 1 ? ` · each call split across ${w} workers (${p.heads >= w ? 'by heads' : 'by query rows'})` : '';
  return `T = ${p.tStart} … ${p.tEnd} by doubling · ${shape} · ${p.heads} head${p.heads > 1 ? 's' : ''} · ${p.causal ? 'causal' : 'no mask'} · ${p.kernels.join(' and ')}${split}`;
}

/** What the lesson's loop measures: the projections (linear in T) next to the scores (T²), by
 *  the multiply-add count, and the ratios this sweep measured. No promise of ×4 the run does not show. */
export function projText(p: SweepParams, s: TimingSession): string {
  const share = (t: number) => Math.round((100 * t) / (t + 2 * p.dModel)); // 2HT²d_k / (2HT²d_k + 4T·d_model·H·d_k)
  const ratio = (t: number) => (2 * (2 * t + 2 * p.dModel)) / (t + 2 * p.dModel); // work(2T) / work(T)
  const last = p.tEnd / 2;
  let text = `What this measures: lesson 2’s loop. Every call multiplies X (T × ${p.dModel}) by Wq, Wk and Wv and the result by Wo — 4·T·${p.dModel}·${p.heads * p.dk} multiply-adds, linear in T — besides the scores and weights · V, 2·T²·${p.heads * p.dk}, quadratic. By that count the scores are ${share(p.tStart)} % of the work at T = ${p.tStart} and ${share(p.tEnd)} % at T = ${p.tEnd}: at these sizes the projections dominate, and a doubling should cost about ×${ratio(p.tStart).toFixed(1)} … ×${ratio(last).toFixed(1)}, not ×4 (×4 needs T far above 2·d_model = ${2 * p.dModel}).`;
  for (const k of p.kernels) {
    const pts = s.pointsOf(k);
    const rs = pts
      .slice(1)
      .map((q, i) => (pts[i].t * 2 === q.t ? `×${(q.stats.median / pts[i].stats.median).toFixed(1)}` : null))
      .filter((x) => x);
    if (rs.length) {
      const f = s.fits()[k];
      text += ` Measured here (${k}): ${rs.join(', ')} per doubling${f ? `, fitted p = ${f.exponent.toFixed(2)}` : ''}.`;
    }
  }
  return text;
}

/** The lab's explanation under the results: what is measured, why ×4, tiled and linear attention. */
export function explainer(): HTMLElement {
  const block = (title: string, ...ps: string[]) =>
    el('section', {}, el('h4', { text: title }), ...ps.map((t) => el('p', { text: t })));
  return el(
    'div',
    { class: 'timing-explain' },
    block(
      'What is measured',
      'One call of the WebAssembly core per sample: scores Q Kᵀ · 1/√d_k, the mask, the softmax and weights · V, on random inputs made once per T. It runs in its own Web Worker, so the page stays responsive and the heatmaps keep their own worker.',
      'First come warm-up calls: the browser starts WebAssembly in a quick baseline compiler and swaps in optimised code after a while; a call that is already running is never upgraded. Each point is then the median of several repeats, with the fastest and slowest shown as a bar. Very short calls are timed in batches and divided, because the browser’s clock ticks only every 0.1 ms or so. The naive time includes copying the T × T weights back to JavaScript, as the heatmaps need them.',
    ),
    block(
      'Why ×4 per doubling',
      'Q Kᵀ has T × T entries and each costs d_k multiply-adds; weights · V costs as much again. Double T and there are 2T × 2T = 4T² entries: four times the work. Time ∝ T² is a straight line of slope 2 on a log–log chart — the dashed line. Small T sits above it: fixed costs per call, and copying Q, K and V, grow only linearly and matter only while T² is small.',
    ),
    block(
      'What the tiled kernel changes — and what it does not',
      'The tiled kernel is FlashAttention’s idea: it never builds the T × T matrix. It takes 64 queries at a time and walks the keys in tiles of 32, keeping a running maximum and sum for each query row and rescaling them when a new tile raises the maximum. Memory becomes linear in T: inputs, output and one small tile.',
      'The arithmetic is still quadratic, so its slope is still about 2. It is exact, not an approximation: its output equals the naive kernel’s up to floating-point rounding. On a GPU the saving is memory traffic, which is usually what costs time. Here, compare the two slopes (both about 2) and the memory panel: quadratic against linear.',
    ),
    block(
      'Linear attention: a different computation, slope 1',
      'Kernels “tiled softmax and linear attention” times the core’s linear attention (Katharopoulos et al. 2020) next to the tiled softmax kernel. It replaces the softmax with a feature map φ(x) = elu(x) + 1: w_ij = φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j). Regrouping the products, each output is φ(q_i)·S / φ(q_i)·z with S = Σ_j φ(k_j) v_jᵀ (a d_k × d_v matrix) and z = Σ_j φ(k_j), running sums over the keys (prefix sums under the causal mask).',
      'No T × T scores are ever formed, so doubling T doubles the work: a slope of about 1 where softmax has 2. The price: its weights are not softmax’s (no sharp, winner-take-most rows), so it is a different model, not a faster way to compute the same one; the Lesson view shows its weights next to softmax’s.',
    ),
  );
}
