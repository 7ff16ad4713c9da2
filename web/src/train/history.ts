// A training run's history as the page keeps it: every step's loss (never dropped), the held-out
// evaluations and the head scores at fixed steps; plus what the charts mark on it (accuracy
// crossings, the shelf and the drop) and the thinning used for drawing. Pure: no DOM.
import type { HeadScores } from './protocol';

export class History {
  /** loss[i] = training loss of step i + 1 */
  loss = new Float32Array(1024);
  gradNorm = new Float32Array(1024);
  steps = 0;
  evalStep: number[] = [];
  evalLoss: number[] = [];
  evalAccuracy: number[] = [];
  scores: HeadScores[] = [];

  pushLosses(firstStep: number, losses: Float32Array, norms: Float32Array): void {
    // A chunk always continues the run (firstStep = steps + 1); anything else is a stale message.
    if (firstStep !== this.steps + 1) return;
    const need = this.steps + losses.length;
    if (need > this.loss.length) {
      const cap = Math.max(need, this.loss.length * 2);
      const l = new Float32Array(cap);
      l.set(this.loss.subarray(0, this.steps));
      const g = new Float32Array(cap);
      g.set(this.gradNorm.subarray(0, this.steps));
      this.loss = l;
      this.gradNorm = g;
    }
    this.loss.set(losses, this.steps);
    this.gradNorm.set(norms, this.steps);
    this.steps = need;
  }

  pushEval(step: number, loss: number, accuracy: number): void {
    if (this.evalStep.length > 0 && step <= this.evalStep[this.evalStep.length - 1]) return;
    this.evalStep.push(step);
    this.evalLoss.push(loss);
    this.evalAccuracy.push(accuracy);
  }

  pushScores(s: HeadScores): void {
    if (this.scores.length > 0 && s.step <= this.scores[this.scores.length - 1].step) return;
    this.scores.push(s);
  }

  lossArray(): number[] {
    return Array.from(this.loss.subarray(0, this.steps));
  }
}

/** First evaluated step whose accuracy is ≥ x, or null. */
export function crossing(h: Pick<History, 'evalStep' | 'evalAccuracy'>, x: number): number | null {
  for (let i = 0; i < h.evalStep.length; i++) if (h.evalAccuracy[i] >= x) return h.evalStep[i];
  return null;
}

export interface ShelfDrop {
  /** the plateau before the drop: steps and mean held-out loss */
  shelfFrom: number;
  shelfTo: number;
  shelfLoss: number;
  /** the step where the held-out loss falls fastest */
  drop: number;
  /** how far it fell over the steepest window (nats) */
  fall: number;
}

/**
 * The shelf and the drop of a held-out loss curve: the drop is the middle of the window of `w`
 * evaluations over which the loss falls most (after the first w, which hold the fall from ln V to
 * the unigram level); the shelf is the last run of evaluations before it within ±5 % of the median
 * loss before it, at least three evaluations long. Null until the fall is at least `minFall`
 * nats, or when there is no such plateau.
 */
export function shelfAndDrop(
  step: readonly number[],
  loss: readonly number[],
  w = 4,
  minFall = 0.25,
): ShelfDrop | null {
  const n = loss.length;
  if (n < 2 * w + 1) return null;
  let best = -Infinity;
  let at = -1;
  for (let i = w; i + w < n; i++) {
    const f = loss[i] - loss[i + w];
    if (Number.isFinite(f) && f > best) {
      best = f;
      at = i;
    }
  }
  if (at < 0 || best < minFall) return null;
  // The shelf: the plateau before the drop, at the median loss of the evaluations before the
  // steepest window (most of them sit on it), i.e. the last run of evaluations within ±5 % of it.
  const before = loss
    .slice(1, at + 1)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (before.length === 0) return null;
  const level = before[Math.floor(before.length / 2)];
  const on = (v: number) => v >= level * 0.95 && v <= level * 1.05;
  let to = at;
  while (to > 0 && !on(loss[to])) to--;
  if (!on(loss[to])) return null;
  let from = to;
  while (from > 0 && on(loss[from - 1])) from--;
  // A shelf is a plateau: at least three evaluations in a row. A curve that only falls (a
  // saturated softmax's 10⁵-nat start) has none, and no shelf is claimed for it.
  if (to - from + 1 < 3) return null;
  let sum = 0;
  for (let i = from; i <= to; i++) sum += loss[i];
  return {
    shelfFrom: step[from],
    shelfTo: step[to],
    shelfLoss: sum / (to - from + 1),
    drop: step[at + Math.floor(w / 2)],
    fall: best,
  };
}

/**
 * Points to draw for a long series: at most `max` buckets, each drawn at its mean (x = the
 * bucket's middle step). The data itself is kept; only the drawing is thinned.
 */
export function thin(values: ArrayLike<number>, count: number, max: number): { x: number[]; y: number[] } {
  const x: number[] = [];
  const y: number[] = [];
  if (count <= max) {
    for (let i = 0; i < count; i++) {
      x.push(i + 1);
      y.push(values[i]);
    }
    return { x, y };
  }
  const per = count / max;
  for (let b = 0; b < max; b++) {
    const lo = Math.floor(b * per);
    const hi = Math.min(count, Math.floor((b + 1) * per));
    let s = 0;
    let k = 0;
    for (let i = lo; i < hi; i++) {
      if (Number.isFinite(values[i])) {
        s += values[i];
        k++;
      }
    }
    if (k === 0) continue;
    x.push((lo + hi + 1) / 2);
    y.push(s / k);
  }
  return { x, y };
}

export type Phase = 'shelf' | 'rising' | 'formed';
export function phaseOf(accuracy: number): Phase {
  return accuracy >= 0.9 ? 'formed' : accuracy >= 0.5 ? 'rising' : 'shelf';
}
export const PHASE_TEXT: Record<Phase, string> = {
  shelf: 'On the shelf: repeated-half accuracy below 0.5.',
  rising: 'Accuracy crossed 0.5: the induction circuit is forming.',
  formed: 'Accuracy crossed 0.9: induction heads have formed.',
};

/** A Play without a stop step ends here: the held-out loss has plateaued when its best over the
 *  last PLATEAU_WINDOW steps is less than PLATEAU_GAIN below its best before them. The default run
 *  (seed 0) forms its induction heads by step 150, then its held-out loss wanders between 0.0004
 *  and 0.4 (lr 0.01): it stops near step 2,000 (2,016 and 2,019 in two Chromium runs). */
export const PLATEAU_WINDOW = 1000;
export const PLATEAU_GAIN = 0.01;

/** When the held-out loss has plateaued (see PLATEAU_WINDOW): its best before the last window and
 *  over it; else null. Needs two windows of evaluations, from step `from` on (0, or where the last
 *  plateau stop was). */
export function plateaued(
  h: History,
  from = 0,
  window = PLATEAU_WINDOW,
  gain = PLATEAU_GAIN,
): { before: number; recent: number } | null {
  const n = h.evalStep.length;
  if (n === 0) return null;
  const last = h.evalStep[n - 1];
  if (last - from < 2 * window) return null;
  let before = Infinity;
  let recent = Infinity;
  for (let k = 0; k < n; k++) {
    const l = h.evalLoss[k];
    if (!Number.isFinite(l) || h.evalStep[k] <= from) continue;
    if (h.evalStep[k] > last - window) recent = Math.min(recent, l);
    else before = Math.min(before, l);
  }
  return Number.isFinite(before) && recent > before * (1 - gain) ? { before, recent } : null;
}
