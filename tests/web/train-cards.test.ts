// Every Train experiment card's claim holds on its own run, replayed in Node: the card's preset
// state → the Worker's trainer config → the same training module the page loads
// (build/wasm/attn_train), evaluated at the steps the Worker evaluates (step 0, then every
// EVAL_EVERY), and the claim checked with the functions the page draws its caption and phase
// marks with (crossing, shelfAndDrop). The module gives the same bits in Node as in Chromium's
// Workers (tests/browser/train-workers.test.mjs), so this is the run the card's link starts;
// tests/browser/train-defects.test.mjs opens one card's link in Chromium and checks the page's own
// figures, caption included.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnTrainLib, CreateAttnTrain } from '../../web/src/wasm/attn-train';
import { TRAIN_PRESETS, presetTrain, type TrainPreset } from '../../web/src/train/presets';
import { trainerConfig } from '../../web/src/train/config';
import { EVAL_EVERY } from '../../web/src/train/protocol';
import { crossing, shelfAndDrop } from '../../web/src/train/history';

let train: AttnTrainLib;
beforeAll(async () => {
  const fs = await import(/* @vite-ignore */ 'node:' + 'fs');
  const mjs = new URL('../../build/wasm/attn_train.mjs', import.meta.url).href;
  const wasm = new URL('../../build/wasm/attn_train.wasm', import.meta.url);
  train = await ((await import(/* @vite-ignore */ mjs)) as { default: CreateAttnTrain }).default({ wasmBinary: fs.readFileSync(wasm) });
});

interface Run {
  evalStep: number[];
  evalLoss: number[];
  evalAccuracy: number[];
  step: number;
}

/** The card's run to its stop step, evaluated where the Worker evaluates. */
function run(p: TrainPreset): Run {
  const state = presetTrain(p);
  const until = state.until;
  expect(until, `${p.id} has a stop step`).toBeGreaterThan(0);
  const tr = train.createTrainer(trainerConfig(state));
  try {
    const e0 = tr.evaluate();
    const r: Run = { evalStep: [0], evalLoss: [e0.loss], evalAccuracy: [e0.accuracy], step: 0 };
    while (r.step < until) {
      const n = Math.min(EVAL_EVERY - (r.step % EVAL_EVERY), until - r.step);
      const t = tr.train(n);
      if (!t.finite) break; // the Worker stops a diverged run; its history holds applied steps only
      r.step = t.step;
      if (r.step % EVAL_EVERY === 0) {
        const e = tr.evaluate();
        r.evalStep.push(r.step);
        r.evalLoss.push(e.loss);
        r.evalAccuracy.push(e.accuracy);
      }
    }
    return r;
  } finally {
    tr.delete();
  }
}

describe('each Train card’s claim, on its run (seed 0)', () => {
  for (const p of TRAIN_PRESETS) {
    it(`${p.id}: ${p.title}`, () => {
      const c = p.claim;
      expect(Object.keys(c).length, `${p.id} states its claim as numbers`).toBeGreaterThan(0);
      const h = run(p);
      const acc = h.evalAccuracy;
      const loss = h.evalLoss;
      const c90 = crossing(h, 0.9);
      const where = `${p.id} (“${p.figure}”)`;
      if (c.finalAccuracy) {
        expect(acc.at(-1)!, `${where}: final accuracy`).toBeGreaterThanOrEqual(c.finalAccuracy[0]);
        expect(acc.at(-1)!, `${where}: final accuracy`).toBeLessThanOrEqual(c.finalAccuracy[1]);
      }
      if (c.maxAccuracy !== undefined) expect(Math.max(...acc), `${where}: max accuracy`).toBeLessThanOrEqual(c.maxAccuracy);
      if (c.crossed90) {
        expect(c90, `${where}: accuracy 0.9 is reached`).not.toBeNull();
        expect(c90!, `${where}: 0.9 at`).toBeGreaterThanOrEqual(c.crossed90[0]);
        expect(c90!, `${where}: 0.9 at`).toBeLessThanOrEqual(c.crossed90[1]);
      }
      if (c.finalLoss) {
        expect(loss.at(-1)!, `${where}: final loss`).toBeGreaterThanOrEqual(c.finalLoss[0]);
        expect(loss.at(-1)!, `${where}: final loss`).toBeLessThanOrEqual(c.finalLoss[1]);
      }
      if (c.startLossAbove !== undefined) expect(loss[0], `${where}: step-0 loss`).toBeGreaterThan(c.startLossAbove);
      // The caption says "Shelf at …" exactly when shelfAndDrop finds one (live-charts.ts).
      if (c.shelf !== undefined) expect(shelfAndDrop(h.evalStep, h.evalLoss) !== null, `${where}: shelf`).toBe(c.shelf);
      // The numbers a card quotes as "step ~N" are its run's crossing, within one evaluation or two.
      const m = p.figure.match(/accuracy 0\.9 at step ~(\d+)/);
      if (m) expect(Math.abs(c90! - Number(m[1])), `${where}: says ~${m[1]}, run crossed at ${c90}`).toBeLessThanOrEqual(10);
      console.log(
        `# card ${p.id}: step ${h.step}, accuracy ${acc.at(-1)!.toFixed(3)} (max ${Math.max(...acc).toFixed(3)}), held-out loss ${loss.at(-1)!.toPrecision(3)}, 0.9 at ${c90}`,
      );
    }, 120_000);
  }
  // The one-layer card no longer says the loss stays on the shelf (it falls to ~2.4).
  it('the one-layer card does not claim a shelf', () => {
    expect(TRAIN_PRESETS.find((p) => p.id === 'train-one-layer')!.figure).not.toMatch(/stays on the shelf/);
  });
});
