// The Train tab's exports: the run as JSON (config, history, head scores, weights) and the
// history as CSV. Pure: no DOM. Non-finite numbers become null in JSON.
import type { History } from './history';
import type { HeadScores } from './protocol';
import type { TrainState } from './config';

const num = (v: number): number | null => (Number.isFinite(v) ? v : null);
const arr = (a: ArrayLike<number>): (number | null)[] => Array.from(a, num);

/** [layer][head] from an l·H + h array */
function perHead(a: Float32Array, L: number, H: number): (number | null)[][] {
  return Array.from({ length: L }, (_, l) => arr(a.subarray(l * H, (l + 1) * H)));
}

function weightsJson(w: unknown): unknown {
  if (w === null || w === undefined) return null;
  if (ArrayBuffer.isView(w)) return arr(w as unknown as Float32Array);
  if (Array.isArray(w)) return w.map(weightsJson);
  if (typeof w === 'object')
    return Object.fromEntries(Object.entries(w as Record<string, unknown>).map(([k, v]) => [k, weightsJson(v)]));
  return w;
}

export function exportDoc(
  config: Record<string, unknown>,
  h: History,
  scores: HeadScores | null,
  dims: { L: number; H: number },
  weights: Record<string, unknown> | null,
  settings: TrainState | null,
): unknown {
  const { L, H } = dims;
  return {
    config,
    settings,
    history: {
      step: Array.from({ length: h.steps }, (_, i) => i + 1),
      loss: arr(h.loss.subarray(0, h.steps)),
      gradNorm: arr(h.gradNorm.subarray(0, h.steps)),
      evalStep: [...h.evalStep],
      evalLoss: h.evalLoss.map(num),
      evalAccuracy: h.evalAccuracy.map(num),
    },
    headScores: scores && {
      step: scores.step,
      layout: '[layer][head]; kComposition [layer][head in layer][head in layer + 1]',
      previousToken: perHead(scores.previousToken, L, H),
      induction: perHead(scores.induction, L, H),
      duplicateToken: perHead(scores.duplicateToken, L, H),
      ablationLoss: perHead(scores.ablationLoss, L, H),
      loss: num(scores.loss),
      kComposition: Array.from({ length: Math.max(0, L - 1) }, (_, l) =>
        Array.from({ length: H }, (_, h1) => arr(scores.kComposition.subarray((l * H + h1) * H, (l * H + h1 + 1) * H))),
      ),
    },
    headScoresHistory: {
      step: h.scores.map((s) => s.step),
      previousToken: h.scores.map((s) => perHead(s.previousToken, L, H)),
      induction: h.scores.map((s) => perHead(s.induction, L, H)),
      duplicateToken: h.scores.map((s) => perHead(s.duplicateToken, L, H)),
    },
    weights: weightsJson(weights),
  };
}

export function exportCsv(h: History): string {
  const ev = new Map<number, number>();
  h.evalStep.forEach((s, i) => ev.set(s, i));
  const lines = ['step,loss,grad_norm,eval_loss,eval_accuracy'];
  const cell = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : String(v));
  if (ev.has(0)) {
    const i = ev.get(0)!;
    lines.push(`0,,,${cell(h.evalLoss[i])},${cell(h.evalAccuracy[i])}`);
  }
  for (let s = 1; s <= h.steps; s++) {
    const i = ev.get(s);
    lines.push(
      `${s},${cell(h.loss[s - 1])},${cell(h.gradNorm[s - 1])},${i === undefined ? '' : cell(h.evalLoss[i])},${i === undefined ? '' : cell(h.evalAccuracy[i])}`,
    );
  }
  return lines.join('\n') + '\n';
}
