// The Decode tab's Worker: one instance of the training module (attn_train). The page keeps one
// for stepping (it holds the model) and starts a fresh one per timing run; Cancel terminates the
// Worker, which stops even a call running inside wasm.
/// <reference lib="webworker" />
import { loadTrain, type AttnTrainLib, type AttnTrainer } from '../wasm/load-train';
import type {
  DecodeMessage,
  DecodeRequest,
  StateBytesRow,
  StateRun,
  StepData,
  TimingParams,
  Trajectory,
} from './protocol';
import { copyPrompt, kvVariants, type DecodeMode, type DecodeShape } from './model';
import { batchSize, plannedCalls, stats, sweepTs } from '../measure/model';

function post(m: DecodeMessage, transfer: Transferable[] = []): void {
  (self as unknown as DedicatedWorkerGlobalScope).postMessage(m, transfer);
}

let libP: Promise<AttnTrainLib> | null = null;
const lib = () => (libP ??= loadTrain());

let trainer: AttnTrainer | null = null;
let batches: { tokens: Int32Array; lossMask: Uint8Array }[] = [];

function shapeOf(tr: AttnTrainer): DecodeShape {
  const c = tr.config;
  return {
    layers: Number(c.layers),
    heads: Number(c.heads),
    kvHeads: Number(c.kvHeads),
    dModel: Number(c.dModel),
    vocab: Number(c.vocab),
    seqLen: Number(c.seqLen),
  };
}

/** Config A of the training module (docs/train-api.md): the induction task's defaults. */
const DEFAULT_CONFIG = { task: 'induction', seed: 0 };
const TARGET_ACCURACY = 0.9;
const MAX_STEPS_SHOWN = 256;
const MAX_STEPS = 400;

async function setModel(req: Extract<DecodeRequest, { kind: 'model' }>): Promise<void> {
  const L = await lib();
  trainer?.delete();
  trainer = null;
  batches = [];
  let source: 'train-tab' | 'default' = 'default';
  let tr: AttnTrainer;
  if (req.model) {
    tr = L.createTrainer({ ...req.model.config, weights: req.model.weights });
    source = 'train-tab';
  } else {
    const linear = req.normalizer === 'linear';
    tr = L.createTrainer(linear ? { ...DEFAULT_CONFIG, normalizer: 'linear' } : DEFAULT_CONFIG);
    const what = linear ? 'the linear-attention model (config A, normalizer linear)' : 'the default induction model';
    // Chunks of 10 steps with an evaluation between them, until the copy works (about 150–170
    // steps for config A).
    let acc = 0;
    post({ kind: 'progress', phase: 'train', fraction: 0, text: `Training ${what}…` });
    while (tr.step < MAX_STEPS) {
      const r = tr.train(10);
      if (!r.finite) break;
      acc = tr.evaluate().accuracy;
      post({
        kind: 'progress',
        phase: 'train',
        fraction: Math.min(1, tr.step / (linear ? MAX_STEPS : 200)),
        text: `Training ${what}: step ${tr.step}, held-out copy accuracy ${(acc * 100).toFixed(0)} %`,
      });
      if (acc >= TARGET_ACCURACY) break;
    }
  }
  trainer = tr;
  const ev = tr.evaluate();
  post({
    kind: 'model-ready',
    source,
    step: req.model ? req.model.step : tr.step,
    accuracy: ev.accuracy,
    shape: shapeOf(tr),
    config: { ...tr.config },
  });
}

function argmax(x: Float32Array): number {
  let a = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[a]) a = i;
  return a;
}

function softmaxAt(x: Float32Array, i: number): number {
  let m = -Infinity;
  for (const v of x) m = Math.max(m, v);
  let s = 0;
  for (const v of x) s += Math.exp(v - m);
  return Math.exp(x[i] - m) / s;
}

function trajectory(seq: number, keep: number): Trajectory {
  const tr = trainer;
  if (!tr) throw Object.assign(new Error('no model yet'), { field: 'model' });
  const shape = shapeOf(tr);
  const B = Number(tr.config.batch);
  while (batches.length <= Math.floor(seq / B)) batches.push(tr.sampleBatch());
  const b = batches[Math.floor(seq / B)];
  const S = shape.seqLen;
  const i0 = (seq % B) * S;
  const toks = b.tokens.subarray(i0, i0 + S);
  // A model of another task (from the Train tab) has no copy to find: its first half is the prompt.
  const cp = copyPrompt(toks, b.lossMask.subarray(i0, i0 + S), keep) ?? {
    tokens: Array.from(toks),
    promptLen: S >> 1,
    firstCopy: -1,
    secondCopy: S,
    sLen: 0,
  };
  // Every step keeps its K/V pictures (O(T²) in all): a long model is decoded up to MAX_STEPS.
  const T = Math.min(S, Math.max(MAX_STEPS_SHOWN, cp.promptLen + 8));

  // The K/V cache even for a linear model (the pictures need the keys); its recurrent state
  // decodes beside it and must give the recompute path's tokens.
  const c = tr.decoder({ cache: true, state: false });
  const r = tr.decoder({ cache: false });
  const sd = tr.config.normalizer === 'linear' ? tr.decoder({ cache: true, state: true }) : null;
  const st: StateRun | null = sd
    ? { tokens: [], sameTokens: true, maxAbsDiff: 0, bytes: 0, cacheBytes: 0, ms: [] }
    : null;
  let nextS = -1,
    samePrefix = true;
  const steps: StepData[] = [];
  const recomputeTokens: number[] = [];
  const cachedMs: number[] = [];
  const recomputeMs: number[] = [];
  let worst = 0;
  let cacheBytes = 0;
  let nextC = -1,
    nextR = -1;
  try {
    for (let t = 0; t < T; t++) {
      const fromPrompt = t < cp.promptLen;
      const tokC = fromPrompt ? cp.tokens[t] : nextC;
      const tokR = fromPrompt ? cp.tokens[t] : nextR;
      let t0 = performance.now();
      const a = c.append(tokC);
      cachedMs.push(performance.now() - t0);
      t0 = performance.now();
      const z = r.append(tokR);
      recomputeMs.push(performance.now() - t0);
      cacheBytes = a.cacheBytes;
      if (tokC === tokR) {
        for (let i = 0; i < a.logits.length; i++) worst = Math.max(worst, Math.abs(a.logits[i] - z.logits[i]));
        const wa = a.weights!,
          wz = z.weights!;
        for (let i = 0; i < wa.length; i++) worst = Math.max(worst, Math.abs(wa[i] - wz[i]));
      }
      nextC = argmax(a.logits);
      nextR = argmax(z.logits);
      recomputeTokens.push(tokR);
      if (sd && st) {
        const tokS = fromPrompt ? cp.tokens[t] : nextS;
        t0 = performance.now();
        const y = sd.append(tokS);
        st.ms.push(performance.now() - t0);
        st.bytes = y.cacheBytes;
        st.cacheBytes = a.cacheBytes;
        st.tokens.push(tokS);
        samePrefix &&= tokS === tokR;
        st.sameTokens &&= tokS === tokR;
        if (samePrefix)
          for (let i = 0; i < y.logits.length; i++)
            st.maxAbsDiff = Math.max(st.maxAbsDiff, Math.abs(y.logits[i] - z.logits[i]));
        nextS = argmax(y.logits);
      }
      const k: Float32Array[] = [],
        v: Float32Array[] = [];
      for (let l = 0; l < shape.layers; l++) {
        const kv = c.cache(l);
        k.push(kv.k);
        v.push(kv.v);
      }
      steps.push({
        t,
        token: tokC,
        source: fromPrompt ? 'prompt' : 'generated',
        expected: t > cp.secondCopy ? cp.tokens[t] : null,
        predicted: nextC,
        prob: softmaxAt(a.logits, nextC),
        weights: a.weights!,
        k,
        v,
      });
    }
  } finally {
    c.delete();
    r.delete();
    sd?.delete();
  }
  return {
    seq,
    shape,
    tokens: cp.tokens.slice(0, T),
    promptLen: cp.promptLen,
    firstCopy: cp.firstCopy,
    secondCopy: cp.secondCopy,
    sLen: cp.sLen,
    steps,
    recomputeTokens,
    maxAbsDiff: worst,
    cacheBytes,
    cachedMs,
    recomputeMs,
    state: st,
  };
}

// ---------- timing ----------
const MIN_POINT_MS = 200;
/** Cached steps: samples per point and appends per sample (the window of appends is centred on T). */
const CACHED_SAMPLES = 25;
const CACHED_BATCH = 6;

/** The decoder a timed mode uses: cached is the K/V cache (also for a linear model). */
function decoderFor(tr: AttnTrainer, mode: DecodeMode) {
  return tr.decoder(mode === 'recompute' ? { cache: false } : { cache: true, state: mode === 'state' });
}
/** How a mode's step time grows with T (for the budget and the progress bar). */
const GROWTH: Record<DecodeMode, number> = { state: 0, cached: 1, recompute: 2 };

async function timing(p: TimingParams, budgetMs: number): Promise<void> {
  const L = await lib();
  const ts = sweepTs(p.tStart, p.tEnd);
  const seqLen = p.tEnd + 96; // the timed appends run over a window centred on T (cached: T ± 79)
  const base = {
    task: 'random',
    vocab: 64,
    layers: p.layers,
    heads: p.heads,
    dModel: p.dModel,
    batch: 1,
    kernel: 'tiled',
    seed: 1,
    ...(p.linear ? { normalizer: 'linear' } : {}),
  };
  const modes: DecodeMode[] = p.linear ? ['state', 'cached'] : ['cached', 'recompute'];

  if (p.linear) {
    // Bytes of the state and of the K/V cache as the module reports them, for a model made at
    // each T (the cache is allocated for seqLen at once; the state does not depend on it).
    const rows: StateBytesRow[] = [];
    for (const t of ts) {
      const tv = L.createTrainer({ ...base, seqLen: t, kvHeads: p.heads });
      const a = decoderFor(tv, 'state'),
        b = decoderFor(tv, 'cached');
      rows.push({ t, state: a.append(1).cacheBytes, cache: b.append(1).cacheBytes });
      a.delete();
      b.delete();
      tv.delete();
    }
    post({ kind: 'state-bytes', rows });
  } else {
    // Cache memory of the MHA, GQA and MQA variants at T = tEnd, as the module reports it.
    const rows: { name: string; kvHeads: number; bytes: number }[] = [];
    for (const v of kvVariants(p.heads)) {
      const tv = L.createTrainer({ ...base, seqLen: p.tEnd, kvHeads: v.kvHeads });
      const d = tv.decoder({ cache: true });
      rows.push({ name: v.name, kvHeads: v.kvHeads, bytes: d.append(1).cacheBytes });
      d.delete();
      tv.delete();
    }
    post({ kind: 'memory', t: p.tEnd, rows, heapBytes: L.heapBytes() });
  }

  const tr = L.createTrainer({ ...base, seqLen, kvHeads: p.heads });
  const toks = Int32Array.from({ length: seqLen }, (_, i) => (i * 7919 + 13) % 64);
  // Warm-up: steps until the best time stops improving (the engine's optimised code has arrived;
  // a call already running is never upgraded), at least 1 s and at most 4 s per mode, at the
  // sweep's first length so the long-sequence code paths are optimised too.
  post({ kind: 'progress', phase: 'timing', fraction: 0, text: 'Warming up…' });
  const tw = Math.min(ts[0], 256);
  for (const mode of modes) {
    const d = decoderFor(tr, mode);
    const start = performance.now();
    let best = Infinity;
    let calm = 0;
    while (performance.now() - start < 4000) {
      d.reset();
      d.prefill(toks.subarray(0, tw - 8));
      const t0 = performance.now();
      for (let i = tw - 8; i < tw; i++) d.append(toks[i]);
      const ms = performance.now() - t0;
      if (ms < best * 0.97) calm = 0;
      else calm++;
      best = Math.min(best, ms);
      if (calm >= 8 && performance.now() - start > 1000) break;
    }
    d.delete();
  }

  const weight = (t: number, m: DecodeMode) => (m === 'state' ? 64 * 64 : m === 'cached' ? t * 64 : t * t);
  const total = ts.reduce((a, t) => a + modes.reduce((b, m) => b + weight(t, m), 0), 0);
  let done = 0;
  const prev = new Map<DecodeMode, { t: number; ms: number }>();
  const stopped = new Set<DecodeMode>();
  for (const t of ts) {
    for (const mode of modes) {
      const share = weight(t, mode);
      const fast = mode !== 'recompute';
      if (stopped.has(mode)) {
        done += share;
        continue;
      }
      const last = prev.get(mode);
      const predicted = last ? last.ms * (t / last.t) ** GROWTH[mode] : NaN;
      const plan = plannedCalls(predicted);
      if (Number.isFinite(predicted) && predicted * (plan.warmup + plan.repeats) > budgetMs) {
        stopped.add(mode);
        post({
          kind: 'error',
          field: null,
          message: `${mode}: stopped before T = ${t}: one step would take about ${predicted.toFixed(0)} ms, ${((predicted * (plan.warmup + plan.repeats)) / 1000).toFixed(1)} s with warm-up and repeats, over the budget of ${(budgetMs / 1000).toFixed(0)} s per point.`,
        });
        done += share;
        continue;
      }
      const progress = (f: number, text: string) =>
        post({ kind: 'progress', phase: 'timing', fraction: (done + share * f) / total, text });
      progress(0, `T = ${t}, ${mode}: filling the prefix`);
      const d = decoderFor(tr, mode);
      // Appends run over a window centred on T, so the mean length is T.
      const window = fast ? CACHED_SAMPLES * CACHED_BATCH + 8 : plan.warmup + plan.repeats + 1;
      let pos = Math.max(0, t - (window >> 1));
      d.prefill(toks.subarray(0, pos));
      const step = () => d.append(toks[pos++]);
      let t0 = performance.now();
      step();
      let est = performance.now() - t0;
      for (let i = 1; i < plan.warmup; i++) {
        t0 = performance.now();
        step();
        est = Math.min(est, performance.now() - t0);
      }
      // Cached and state steps are short: time a few per sample (the browser's clock is coarse).
      const b = fast ? Math.min(CACHED_BATCH, batchSize(est, 1)) : 1;
      const samples: number[] = [];
      let spent = 0;
      const repeats = fast ? CACHED_SAMPLES : plan.repeats;
      for (
        let r = 0;
        (r < repeats || (spent < MIN_POINT_MS && r < 9)) && pos + b <= Math.min(seqLen, t + (window >> 1));
        r++
      ) {
        progress(Math.min(1, (r + 1) / (repeats + 1)), `T = ${t}, ${mode}: repeat ${r + 1}`);
        t0 = performance.now();
        for (let i = 0; i < b; i++) step();
        const ms = (performance.now() - t0) / b;
        samples.push(ms);
        spent += ms * b;
      }
      d.delete();
      const st = stats(samples);
      prev.set(mode, { t, ms: st.median });
      post({ kind: 'point', point: { t, mode, samples, stats: st, heapBytes: L.heapBytes() } });
      done += share;
    }
  }
  tr.delete();
  post({ kind: 'done', heapBytes: L.heapBytes() });
}

function fail(err: unknown): void {
  const e = err as Error & { field?: string };
  post({ kind: 'error', message: String(e?.message ?? err), field: typeof e?.field === 'string' ? e.field : null });
}

// Requests run one after another (a trajectory waits for the model).
let queue: Promise<void> = Promise.resolve();
self.onmessage = (e: MessageEvent<DecodeRequest>) => {
  const m = e.data;
  queue = queue.then(async () => {
    try {
      if (m.kind === 'model') await setModel(m);
      else if (m.kind === 'trajectory') {
        const tj = trajectory(m.seq, m.keep);
        post({ kind: 'trajectory', trajectory: tj });
      } else if (m.kind === 'timing') await timing(m.params, m.budgetMs);
    } catch (err) {
      if (m.kind === 'timing' || (m.kind === 'model' && !trainer))
        post({ kind: 'fatal', message: `The decode worker failed: ${String((err as Error)?.message ?? err)}` });
      else fail(err);
    }
  });
};
