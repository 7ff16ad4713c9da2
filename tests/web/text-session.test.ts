// The Text model tab's run state (web/src/text/session.ts) on the training module as the page's
// Worker runs it (web/src/text/runner.ts over build/wasm/attn_train), with the tiny fixture model:
// a checkpoint read by the page's reader and run through tr.attention reproduces the held-out loss
// the trainer recorded in model.json; the checkpoint, head and text rules; knocking heads out; and
// the JSON export's shape.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnTrainLib, CreateAttnTrain } from '../../web/src/wasm/attn-train';
import { ModelFiles, parseModelJson, readCheckpoint, type ModelSource } from '../../web/src/text/model-files';
import { TextRunner } from '../../web/src/text/runner';
import { TextSession, continuationPlan, type TextBackend } from '../../web/src/text/session';
import { nextLogprobs, meanSurprise } from '../../web/src/text/next';
import { DEFAULT_TEXT } from '../../web/src/text/state';
import { REF, charSpec, charTok, fixtureSource, heldOutText, modelBytes, modelJson, modelText } from './text-helpers';

let lib: AttnTrainLib;
beforeAll(async () => {
  const fs = await import(/* @vite-ignore */ 'node:' + 'fs');
  const mjs = new URL('../../build/wasm/attn_train.mjs', import.meta.url).href;
  const wasm = new URL('../../build/wasm/attn_train.wasm', import.meta.url);
  lib = await ((await import(/* @vite-ignore */ mjs)) as { default: CreateAttnTrain }).default({
    wasmBinary: fs.readFileSync(wasm),
  });
});

const INFO = parseModelJson(modelText());

/** The runner as a backend, in this thread (the page's Worker does the same). */
function backend(): TextBackend & { runner: TextRunner } {
  const runner = new TextRunner(lib);
  return {
    runner,
    load: async (_key, config, weights) => {
      runner.load(config, weights);
      return runner.roles();
    },
    run: async (_key, ids, ablated) => runner.run(ids, ablated),
    generate: async (_key, ids, n, opts, ablated) => runner.generate(ids, n, opts, ablated),
    measure: async (_key, windows, probe, ablated) => runner.measure(windows, probe, ablated),
  };
}

/** A session over the fixture model, and a promise of its next settled state. */
function session(source: ModelSource = fixtureSource()) {
  let wake: (() => void) | null = null;
  const s = new TextSession(new ModelFiles(source), backend(), () => {
    if (s.settled && s.status.state !== 'busy' && wake) {
      const w = wake;
      wake = null;
      w();
    }
  });
  const settle = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      if (s.settled && s.status.state !== 'busy' && s.status.state !== 'idle') {
        wake = null;
        resolve();
      }
    });
  return { s, settle };
}

describe('a checkpoint read by the page and run by the training module', () => {
  it('reproduces every checkpoint’s held-out loss recorded by the trainer (the windows of model.json)', () => {
    const j = modelJson() as Record<string, any>;
    const T = INFO.config.seqLen;
    const N = j.evaluation.windows as number;
    const held = charTok(INFO).encode(heldOutText()).ids;
    const n = held.length;
    const runner = new TextRunner(lib);
    for (const ck of INFO.checkpoints) {
      runner.load(INFO.trainerConfig, readCheckpoint(modelBytes(ck.file), ck.file, INFO.config));
      let sum = 0,
        count = 0;
      for (let i = 0; i < N; i++) {
        const off = Math.floor((i * (n - T)) / (N - 1));
        const ids = held.slice(off, off + T);
        const lp = nextLogprobs(runner.run(ids, []).logits, ids, INFO.config.vocab);
        for (const x of lp) sum -= x;
        count += lp.length;
      }
      expect(count).toBe(N * j.evaluation.targetsPerWindow);
      const loss = sum / count;
      expect(Math.abs(loss - ck.heldOutLoss!) / ck.heldOutLoss!, `step ${ck.step}`).toBeLessThan(2e-6);
    }
    runner.free();
  });

  it('a float16 copy of the last checkpoint gives nearly the same loss (not the same bits)', () => {
    const runner = new TextRunner(lib);
    const ids = charTok(INFO).encode(DEFAULT_TEXT.slice(-32)).ids;
    runner.load(INFO.trainerConfig, readCheckpoint(modelBytes('step-00000024.npz'), 'f32', INFO.config));
    const a = meanSurprise(nextLogprobs(runner.run(ids, []).logits, ids, 91));
    runner.load(INFO.trainerConfig, readCheckpoint(modelBytes('step-00000024.f16.npz'), 'f16', INFO.config));
    const b = meanSurprise(nextLogprobs(runner.run(ids, []).logits, ids, 91));
    expect(Math.abs(a - b)).toBeLessThan(0.01);
    expect(a).not.toBe(b);
    runner.free();
  });
});

describe('the session', () => {
  it('opens on the last checkpoint, reads the text’s last seqLen characters and says so', async () => {
    const fetched: string[] = [];
    const { s, settle } = session(fixtureSource(fetched));
    s.setInputs({ text: DEFAULT_TEXT, ckpt: -1, head: '1.1' });
    await settle();
    const r = s.result!;
    expect(s.status).toEqual({ state: 'ready' });
    expect(fetched).toEqual(['model.json', 'step-00000024.npz']); // the final checkpoint first, nothing else
    expect(r.checkpoint.step).toBe(24);
    expect(r.index).toBe(2);
    expect(r.tokens.chars.join('')).toBe(DEFAULT_TEXT.slice(-32));
    expect(r.dropped).toBe(DEFAULT_TEXT.length - 32);
    expect(s.notices).toEqual([]); // the cut is said beside the text (text-panel.ts)
    expect(r.run.weights.length).toBe(2 * 2 * 32 * 32);
    expect(r.run.logits.length).toBe(32 * 91);
    expect(r.logprobs.length).toBe(31);
    expect(r.intactLogprobs).toBeNull();
    expect(s.roles!.names).toEqual([...lib.headRoles.names]);
    expect(s.roles!.threshold).toBe(lib.headRoles.threshold);
    for (const role of r.run.scores!.roles) expect(lib.headRoles.names).toContain(role);
  });

  it('a step not in model.json shows the nearest (the earlier of two as near), with a notice', async () => {
    const cks = INFO.checkpoints;
    expect(TextSession.resolveStep(cks, -1)).toEqual({ index: 2, notice: null });
    expect(TextSession.resolveStep(cks, 4)).toEqual({ index: 1, notice: null });
    expect(TextSession.resolveStep(cks, 2).index).toBe(0);
    expect(TextSession.resolveStep(cks, 15).index).toBe(2);
    expect(TextSession.resolveStep(cks, 1000).notice).toBe(
      'The model has no checkpoint at step 1,000; showing the nearest, step 24.',
    );
    const { s, settle } = session();
    s.setInputs({ text: 'the cat', ckpt: 5, head: '3.1' });
    await settle();
    expect(s.result!.checkpoint.step).toBe(4);
    expect(s.notices).toEqual([
      'The model has no checkpoint at step 5; showing the nearest, step 4.',
      'This model has 2 layers of 2 heads: there is no L3 H1; showing L1 H1.',
    ]);
    expect(s.selectedHead()).toEqual({ layer: 0, head: 0 });
    s.setInputs({ text: 'the cat', ckpt: 0, head: '2.2' });
    await settle();
    expect(s.result!.checkpoint.step).toBe(0);
    expect(s.notices).toEqual([]);
    expect(s.selectedHead()).toEqual({ layer: 1, head: 1 });
    // Another head only changes what is drawn: nothing is computed again.
    const before = s.result;
    s.setInputs({ text: 'the cat', ckpt: 0, head: '1.2' });
    expect(s.settled).toBe(true);
    expect(s.result).toBe(before);
    expect(s.selectedHead()).toEqual({ layer: 0, head: 1 });
    s.setInputs({ text: 'the cat', ckpt: 0, head: '9.9' });
    expect(s.notices).toEqual(['This model has 2 layers of 2 heads: there is no L9 H9; showing L1 H1.']);
  });

  it('knocking a head out: the layer above changes, its own layer does not; the intact surprise is kept', async () => {
    const { s, settle } = session();
    s.setInputs({ text: 'the cat sat; the cat sat', ckpt: -1, head: '1.1' });
    await settle();
    const intact = s.result!;
    s.toggleAblation(0, 1);
    await settle();
    const r = s.result!;
    expect(r.ablated).toEqual([[0, 1]]);
    expect(Array.from(r.intactLogprobs!)).toEqual(Array.from(intact.logprobs));
    expect(Array.from(r.logprobs)).not.toEqual(Array.from(intact.logprobs));
    const t = r.tokens.ids.length;
    const layer = (w: Float32Array, l: number) => Array.from(w.subarray(l * 2 * t * t, (l + 1) * 2 * t * t));
    expect(layer(r.run.weights, 0)).toEqual(layer(intact.run.weights, 0));
    expect(layer(r.run.weights, 1)).not.toEqual(layer(intact.run.weights, 1));
    s.toggleAblation(0, 1);
    await settle();
    expect(s.result!.intactLogprobs).toBeNull();
    expect(Array.from(s.result!.logprobs)).toEqual(Array.from(intact.logprobs));
  });

  it('a knock-out is measured on the held-out windows and the probe of model.json, as NumPy measures it', async () => {
    const ko = REF.knockout;
    const { s, settle } = session();
    s.setInputs({ text: 'the cat sat; the cat sat', ckpt: -1, head: '1.1' });
    await settle();
    expect(s.result!.measures).toBeNull();
    expect(s.exportData()!.knockout).toBeNull();
    s.toggleAblation(0, 1);
    await settle();
    const m = s.result!.measures!;
    expect(s.result!.checkpoint.step).toBe(ko.checkpoint);
    expect([m.windows, m.probeRows]).toEqual([ko.windows, ko.probeRows]);
    const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1, Math.abs(b));
    // float32 forward in the module against NumPy's float64 (measured ~1e-8).
    for (const [got, want] of [
      [m.intact.heldOutLoss, ko.intact.heldOutLoss],
      [m.ablated.heldOutLoss, ko.knockedOut.heldOutLoss],
      [m.intact.inContext, ko.intact.inContext],
      [m.ablated.inContext, ko.knockedOut.inContext],
    ])
      expect(rel(got, want)).toBeLessThan(1e-5);
    // The intact figures are the trainer's for this checkpoint.
    expect(rel(m.intact.heldOutLoss, s.result!.checkpoint.heldOutLoss!)).toBeLessThan(1e-6);
    expect(rel(m.intact.inContext, s.result!.checkpoint.inContext!)).toBeLessThan(1e-5);
    const e = s.exportData()!.knockout!;
    expect(e.heldOutLoss).toEqual({ intact: m.intact.heldOutLoss, knockedOut: m.ablated.heldOutLoss });
    expect(e.inContext).toEqual({ intact: m.intact.inContext, knockedOut: m.ablated.inContext });
    // Another text with the same knock-out: the measures do not depend on it (kept, not rerun).
    s.setInputs({ text: 'a different text', ckpt: -1, head: '1.1' });
    await settle();
    expect(s.result!.measures).toBe(m);
  });

  it('one character: no scores and nothing predicted; no text: no result', async () => {
    const { s, settle } = session();
    s.setInputs({ text: 'a', ckpt: -1, head: '1.1' });
    await settle();
    expect(s.result!.run.scores).toBeNull();
    expect(s.result!.logprobs.length).toBe(0);
    expect(s.next(0).length).toBe(5);
    s.setInputs({ text: '', ckpt: -1, head: '1.1' });
    await settle();
    expect(s.result).toBeNull();
    expect(s.exportData()).toBeNull();
  });

  it('a model.json that lies about the arrays is an error naming the file and the field, not a crash', async () => {
    const lying = JSON.parse(modelText());
    lying.config.dModel = 32;
    const { s, settle } = session({
      fetchBytes: async (name) => (name === 'model.json' ? new TextEncoder().encode(JSON.stringify(lying)) : modelBytes(name)),
    });
    s.setInputs({ text: 'the cat', ckpt: -1, head: '1.1' });
    await settle();
    expect(s.status).toEqual({
      state: 'error',
      text: "The model’s files could not be used: step-00000024.npz: embed: shape (91, 16) but model.json's config gives (91, 32)",
    });
  });

  it('exports the text, tokens, ids, checkpoint, every head’s map, role and scores, the top 5 and the log-probabilities', async () => {
    const { s, settle } = session();
    const text = 'the cat sat. the cat sat.';
    s.setInputs({ text, ckpt: 4, head: '1.1' });
    await settle();
    const e = s.exportData()!;
    const t = text.length;
    expect(e.text).toBe(text);
    expect(e.droppedChars).toBe(0);
    expect(e.tokens).toEqual(Array.from(text));
    expect(e.ids).toEqual(Array.from(charTok(INFO).encode(text).ids));
    expect(e.checkpoint).toBe(4);
    expect(e.ablated).toEqual([]);
    expect(e.layers.length).toBe(2);
    const sc = s.result!.run.scores!;
    for (const [l, layer] of e.layers.entries()) {
      expect(layer.heads.length).toBe(2);
      for (const [h, head] of layer.heads.entries()) {
        expect(head.weights.length).toBe(t);
        for (const [i, row] of head.weights.entries()) {
          expect(row.length).toBe(t);
          expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-5);
          expect(row.slice(i + 1).every((w) => w === 0)).toBe(true); // causal
        }
        expect(head.role).toBe(sc.roles[l * 2 + h]);
        expect(head.scores).toEqual({
          previous: sc.previous[l * 2 + h],
          induction: sc.induction[l * 2 + h],
          duplicate: sc.duplicate[l * 2 + h],
          first: sc.first[l * 2 + h],
        });
      }
    }
    expect(e.next.length).toBe(t);
    for (const top of e.next) {
      expect(top.length).toBe(5);
      for (let k = 1; k < 5; k++) expect(top[k].p).toBeLessThanOrEqual(top[k - 1].p);
      for (const n of top) expect(n.token).toBe(charSpec(INFO).symbols[n.id]);
    }
    expect(e.logprobs.length).toBe(t - 1);
    // Where the actual next character is in the top 5, its p is exp(logprob).
    for (let i = 0; i + 1 < t; i++) {
      const hit = e.next[i].find((n) => n.id === e.ids[i + 1]);
      if (hit) expect(Math.abs(Math.log(hit.p) - e.logprobs[i])).toBeLessThan(1e-12);
    }
    expect(JSON.parse(JSON.stringify(e))).toEqual(e);
  });
});

describe('continue the text (tr.generate through the runner)', () => {
  const SAMPLED = { dlen: 12, temp: 0.8, topk: 5, topp: 1, sseed: 3 };
  const text = 'the cat sat. the cat';

  it('gives the same continuation for the same request, after the prompt, with top-5 rows', async () => {
    const a = session();
    a.s.setInputs({ text, ckpt: -1, head: '1.1', gen: SAMPLED });
    await a.settle();
    const c = a.s.result!.continuation!;
    expect(c.prompt.join('')).toBe(text);
    expect(c.promptCut).toBe(0);
    expect(c.chars.length).toBe(12);
    expect(c.capped).toBe(false);
    expect(c.top.length).toBe(12);
    for (const [i, row] of c.top.entries()) {
      expect(row.length).toBe(5);
      expect(row.map((r) => r.id)).toContain(c.ids[i]); // top-k 5: the draw is among the 5
      expect(Math.abs(row.reduce((x, r) => x + r.p, 0) - 1)).toBeLessThan(1e-5);
    }
    expect(a.s.exportData()!.generated).toBe(c.chars.join(''));
    const b = session();
    b.s.setInputs({ text, ckpt: -1, head: '1.1', gen: { ...SAMPLED } });
    await b.settle();
    expect(b.s.result!.continuation!.chars).toEqual(c.chars);
    // Another seed and greedy decoding give other text (this model, this prompt).
    b.s.setInputs({ text, ckpt: -1, head: '1.1', gen: { ...SAMPLED, temp: 0 } });
    await b.settle();
    const greedy = b.s.result!.continuation!;
    expect(greedy.chars).not.toEqual(c.chars);
    expect(greedy.ids).toEqual(greedy.top.map((r) => r[0].id)); // greedy: the most probable
    b.s.setInputs({ text, ckpt: -1, head: '1.1', gen: null });
    await b.settle();
    expect(b.s.result!.continuation).toBeNull();
    expect(b.s.exportData()!.generated).toBeNull();
  });

  it('keeps the last seqLen − 1 characters as the prompt and caps the length at seqLen − prompt', async () => {
    const T = INFO.config.seqLen;
    const tok = charTok(INFO);
    const long = 'abcdefghij'.repeat(5);
    const plan = continuationPlan(tok.encode(long), T, 40);
    expect(plan.prompt.chars.join('')).toBe(long.slice(-(T - 1)));
    expect(plan.cut).toBe(long.length - (T - 1));
    expect(plan.n).toBe(1);
    expect(continuationPlan(tok.encode('abc'), T, 40).n).toBe(T - 3);
    expect(continuationPlan(tok.encode('abc'), T, 5).n).toBe(5);
    const { s, settle } = session();
    s.setInputs({ text: long, ckpt: -1, head: '1.1', gen: { ...SAMPLED, dlen: 40 } });
    await settle();
    const c = s.result!.continuation!;
    expect(c.promptCut).toBe(long.length - (T - 1));
    expect(c.chars.length).toBe(1);
    expect(c.capped).toBe(true);
  });
});
