// The Train tab's own module Worker: one attn_train instance, one trainer at a time. It trains in
// time-budgeted chunks (never one message per step), evaluates the fixed held-out batch every
// `evalEvery` steps and takes head scores every `snapEvery` steps (both at fixed steps, so a
// replayed run reports the same history), and yields between chunks so Pause, a new learning
// rate or an ablation are taken at once. The page starts a new Worker to reset.
// With k > 1 Workers it coordinates: it starts k - 1 shard Workers (train/shard-worker.ts) and
// every step's fixed shards are shared out among them (train/pool.ts), with the same bits as one.
// It starts them itself (nested Workers) so gradients never pass through the page's thread,
// and terminating this Worker (Reset) ends them too.
/// <reference lib="webworker" />
import { loadTrain, type AttnTrainLib, type AttnTrainer } from '../wasm/load-train';
import type { HeadScores, Snapshot, StopReason, TrainMessage, TrainRequest } from './protocol';
import { nonFiniteWhat, num } from './numbers';
import { ShardPool, coordinatorAwakeMs, defaultWorkers, type ShardPort, type ShardReply } from './pool';

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Work per chunk before the Worker yields (and posts one progress message). */
const CHUNK_MS = 40;

const scope = self as unknown as DedicatedWorkerGlobalScope;
function post(m: TrainMessage, transfer: Transferable[] = []): void {
  scope.postMessage(m, transfer);
}

let lib: AttnTrainLib | null = null;
let tr: AttnTrainer | null = null;
let pool: ShardPool | null = null;
/** a step is in flight across the Workers: Pause waits for it (it is applied, then reported) */
let inStep = false;
let pauseAfterStep = false;
/** a Worker count asked for while a step was in flight */
let wantWorkers: number | null = null;
let probe = new Int32Array(0);
let heldOut = { tokens: new Int32Array(0), mask: new Uint8Array(0) };
let evalEvery = 5;
let snapEvery = 10;
let running = false;
let token = 0;
let until = 0;
let untilAcc = 0;
let speed = 0;
let stepsLeft: number | null = null;

/**
 * Everything drawn of the current step: head scores, held-out loss and accuracy, score
 * gradients (one call, sharing one forward of the held-out batch) and the probe's attention.
 */
function diagnose(t: AttnTrainer): { snap: Snapshot; loss: number; accuracy: number } {
  const d = t.diagnostics();
  const scores: HeadScores = {
    step: t.step,
    previousToken: d.previousToken,
    induction: d.induction,
    duplicateToken: d.duplicateToken,
    ablationLoss: d.ablationLoss,
    kComposition: d.kComposition,
    loss: d.loss,
  };
  // The probe's q, k, v travel with its weights: "Open in Heads view" takes them apart.
  const a = t.attention(probe, { qkv: true });
  return {
    snap: { scores, attention: a.weights, layers: a.layers, scoreGrad: d.scoreGrad, wqGradNorm: d.wqGradNorm },
    loss: d.loss,
    accuracy: d.accuracy,
  };
}

const tick = (ms: number) =>
  new Promise<void>((r) => {
    if (ms > 0) setTimeout(r, ms);
    else {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => r();
      ch.port2.postMessage(0);
    }
  });

/** ms of the work beside the steps, last measured: an evaluation alone, a step's diagnostics (head scores, evaluation, snapshot) */
const side_ = { eval: 0, scores: 0 };

async function loop(my: number): Promise<void> {
  const t = tr!;
  const runStart = performance.now();
  const stepAtStart = t.step;
  let per = 1; // steps per train() call, adapted to the time budget
  let lastPost = performance.now();
  while (running && my === token) {
    const losses: number[] = [];
    const norms: number[] = [];
    const evals: { step: number; loss: number; accuracy: number }[] = [];
    const scores: HeadScores[] = [];
    /** the snapshot of the chunk's last fixed step with head scores */
    let snapAtScores: Snapshot | null = null;
    const firstStep = t.step + 1;
    let trainMs = 0;
    const sideMs = { eval: 0, scores: 0, snap: 0 };
    let stop: StopReason | null = null;
    let badLoss = NaN;
    let badNorm = NaN;
    let wait = 0;
    const chunkStart = performance.now();
    while (performance.now() - chunkStart < CHUNK_MS) {
      let n = evalEvery - (t.step % evalEvery);
      n = Math.min(n, per);
      if (stepsLeft !== null) n = Math.min(n, stepsLeft);
      if (until > 0) n = Math.min(n, until - t.step);
      if (speed > 0) {
        const due = Math.floor(((performance.now() - runStart) / 1000) * speed) + 1 - (t.step - stepAtStart);
        if (due <= 0) {
          wait = Math.max(1, Math.ceil(1000 / speed) - 1);
          break;
        }
        n = Math.min(n, due);
      }
      if (n <= 0) {
        stop = until > 0 && t.step >= until ? 'until' : 'steps';
        break;
      }
      const t0 = performance.now();
      inStep = true;
      let r: Awaited<ReturnType<ShardPool['train']>>;
      try {
        r = await pool!.train(n);
      } finally {
        inStep = false;
      }
      const dt = performance.now() - t0;
      trainMs += dt;
      // A non-finite step is reported as the last entry and not applied: keep it out of the
      // history (which holds applied steps only), so training can go on after a lower rate.
      const applied = r.finite ? r.loss.length : r.loss.length - 1;
      for (let i = 0; i < applied; i++) {
        losses.push(r.loss[i]);
        norms.push(r.gradNorm[i]);
      }
      if (!r.finite) {
        stop = 'diverged';
        badLoss = r.loss[r.loss.length - 1];
        badNorm = r.gradNorm[r.gradNorm.length - 1];
        break;
      }
      if (stepsLeft !== null) stepsLeft -= n;
      // aim each call at a quarter of the chunk
      per = Math.max(1, Math.min(64, Math.floor(CHUNK_MS / 4 / Math.max(0.01, dt / n))));
      const doEval = t.step % evalEvery === 0;
      const doScores = t.step % snapEvery === 0;
      // Off the critical path: with other Workers, the next step is begun before this work on the
      // same weights, so they compute their shards meanwhile (its batch is drawn now, and stays
      // the next step's batch even if the run stops here: the history does not change).
      const goesOn =
        (until === 0 || t.step < until) && (stepsLeft === null || stepsLeft > 0) && !pauseAfterStep && speed === 0;
      if (goesOn && pool!.prefersSplit && (doEval || doScores)) {
        pool!.begin(pool!.share(doScores ? side_.scores : side_.eval));
      }
      // At a head-score step one call gives the scores, the evaluation and the snapshot (the
      // same bits as separate calls); the chunk posts the last such snapshot.
      let e: { loss: number; accuracy: number } | null = null;
      const s0 = performance.now();
      if (doScores) {
        const d = diagnose(t);
        scores.push(d.snap.scores);
        snapAtScores = d.snap;
        e = d;
        side_.scores = performance.now() - s0;
        sideMs.scores += side_.scores;
      } else if (doEval) {
        e = t.evaluate();
        side_.eval = performance.now() - s0;
        sideMs.eval += side_.eval;
      }
      if (doEval && e) {
        evals.push({ step: t.step, loss: e.loss, accuracy: e.accuracy });
        if (untilAcc > 0 && e.accuracy >= untilAcc) stop = 'accuracy';
      }
      if (!stop && until > 0 && t.step >= until) stop = 'until';
      if (!stop && stepsLeft !== null && stepsLeft <= 0) stop = 'steps';
      if (stop || pauseAfterStep || my !== token) break;
    }
    const now = performance.now();
    // The picture: at a stop, the current step; while running, the latest fixed-step one.
    const s0 = performance.now();
    const snap = stop ? (snapAtScores?.scores.step === t.step ? snapAtScores : diagnose(t).snap) : snapAtScores;
    sideMs.snap = performance.now() - s0;
    post({
      kind: 'progress',
      firstStep,
      losses: Float32Array.from(losses),
      gradNorms: Float32Array.from(norms),
      evals,
      scores,
      snapshot: snap,
      step: t.step,
      trainMs,
      wallMs: now - lastPost,
      sideMs,
    });
    lastPost = now;
    if (pauseAfterStep && !stop) {
      pauseAfterStep = false;
      pause();
      return;
    }
    pauseAfterStep = false;
    if (wantWorkers !== null) await resize(wantWorkers);
    if (stop) {
      running = false;
      // Name what was not finite (a finite loss with an infinite gradient norm is common at a
      // huge rate), and print the numbers readably.
      const msg =
        stop === 'diverged'
          ? `${cap(nonFiniteWhat(badLoss, badNorm))} became non-finite at step ${t.step + 1} (loss ${num(badLoss)}, gradient norm ${num(badNorm)}); that step was not applied. The weights of step ${t.step} are kept.`
          : undefined;
      post({ kind: 'stopped', reason: stop, step: t.step, message: msg });
      return;
    }
    await tick(wait);
  }
}

/** A shard Worker of this page (a nested module Worker), as a pool port. */
function shardPort(): ShardPort {
  const w = new Worker(new URL('./shard-worker.ts', import.meta.url), {
    type: 'module',
    name: 'attention-train-shard',
  });
  const listeners: ((m: ShardReply) => void)[] = [];
  w.onmessage = (e: MessageEvent<ShardReply>) => listeners.forEach((f) => f(e.data));
  w.onerror = (e) => {
    e.preventDefault();
    listeners.forEach((f) =>
      f({ kind: 'error', id: null, message: e.message || 'the shard Worker failed to start', field: null }),
    );
  };
  return {
    post: (m, transfer = []) => w.postMessage(m, transfer),
    listen: (f) => listeners.push(f),
    terminate: () => w.terminate(),
  };
}

/** Pool changes, one after another (a 'run' waits for the one under way). */
let resizing: Promise<void> = Promise.resolve();
function resize(asked: number): Promise<void> {
  resizing = resizing.then(() => resizeNow(asked));
  return resizing;
}

/** Workers to use for a setting (0 = one per core), and the pool for it (1 if helpers cannot start). */
async function resizeNow(asked: number): Promise<void> {
  wantWorkers = null;
  const t = tr;
  if (!t) return;
  const k = asked > 0 ? Math.min(4, asked) : defaultWorkers(navigator.hardwareConcurrency);
  if (pool && pool.workers === k) return;
  // A step begun by the old pool is the new pool's first step (same batch, same bits).
  const pending = pool?.close() ?? null;
  pool = null;
  let note: string | undefined;
  try {
    if (k > 1 && typeof Worker === 'undefined') throw new Error('this browser cannot start a Worker from a Worker');
    pool = await ShardPool.start(t, k, shardPort, pending);
  } catch (e) {
    pool = await ShardPool.start(t, 1, shardPort, pending);
    note = `Training runs on 1 Worker: ${errorOf(e).message}.`;
  }
  // "One per core" keeps whichever is faster now, all shards here or shared (same bits).
  pool.adaptive = asked === 0;
  // Awake while its helpers compute only if the page's main thread keeps a core of its own.
  pool.awakeMs = coordinatorAwakeMs(navigator.hardwareConcurrency, pool.workers, 1);
  // Ablations made so far, on the new replicas too.
  for (const key of ablated) {
    const [l, h] = key.split(':').map(Number);
    pool.setAblation(l, h, true);
  }
  post({ kind: 'workers', workers: pool.workers, note });
}
const ablated = new Set<string>();
const poolWorkers = (): number => pool?.workers ?? 1;

function pause(): void {
  if (!running || !tr) return;
  running = false;
  token++;
  const t = tr;
  const e = diagnose(t);
  post({
    kind: 'progress',
    firstStep: t.step + 1,
    losses: new Float32Array(0),
    gradNorms: new Float32Array(0),
    evals: [],
    scores: [],
    snapshot: e.snap,
    step: t.step,
    trainMs: 0,
    wallMs: 0,
  });
  post({ kind: 'stopped', reason: 'paused', step: t.step, message: `held-out loss ${e.loss.toFixed(3)}` });
}

function errorOf(e: unknown): { message: string; field: string | null } {
  const err = e as { message?: string; field?: string };
  return { message: err?.message ?? String(e), field: err?.field ?? null };
}

async function handle(m: TrainRequest): Promise<void> {
  switch (m.kind) {
    case 'init': {
      const t0 = performance.now();
      try {
        if (!lib) lib = await loadTrain();
      } catch (e) {
        post({ kind: 'fatal', message: `The training module failed to load: ${errorOf(e).message}` });
        return;
      }
      try {
        pool?.close();
        pool = null;
        tr?.delete();
        tr = null;
        ablated.clear();
        const t = lib!.createTrainer(m.config);
        tr = t;
        // The shard Workers load their module while this one evaluates (ready waits for them).
        const starting = resize(m.workers ?? 1);
        evalEvery = m.evalEvery;
        snapEvery = m.snapEvery;
        const b = t.sampleBatch();
        const T = b.tokens.length / (t.config.batch as number);
        probe = b.tokens.slice(0, T);
        const probeMask = b.lossMask.slice(0, T);
        heldOut = { tokens: probe, mask: probeMask };
        const e = diagnose(t);
        await starting;
        post({
          kind: 'ready',
          step: t.step,
          probe,
          probeMask,
          snapshot: e.snap,
          evalLoss: e.loss,
          evalAccuracy: e.accuracy,
          config: { ...t.config },
          startMs: performance.now() - t0,
          workers: poolWorkers(),
        });
      } catch (e) {
        post({ kind: 'refused', ...errorOf(e) });
      }
      return;
    }
    case 'run':
      await resizing;
      if (!tr || !pool || running) return;
      until = m.until;
      untilAcc = m.untilAcc;
      speed = m.speed;
      stepsLeft = m.steps;
      running = true;
      // A shard Worker that fails mid-run (e.g. out of memory) ends the run with its message.
      void loop(++token).catch((e) => {
        running = false;
        post({ kind: 'fatal', message: `Training stopped: ${errorOf(e).message}` });
      });
      return;
    case 'pause':
      if (inStep) pauseAfterStep = true;
      else pause();
      return;
    case 'workers':
      if (running) wantWorkers = m.workers;
      else await resize(m.workers);
      return;
    case 'lr':
      try {
        tr?.setLearningRate(m.lr);
      } catch (e) {
        post({ kind: 'refused', ...errorOf(e) });
      }
      return;
    case 'speed':
      speed = m.speed;
      return;
    case 'stop':
      until = m.until;
      untilAcc = m.untilAcc;
      return;
    case 'ablate': {
      if (!tr) return;
      if (pool) pool.setAblation(m.layer, m.head, m.on);
      else tr.setAblation(m.layer, m.head, m.on);
      if (m.on) ablated.add(`${m.layer}:${m.head}`);
      else ablated.delete(`${m.layer}:${m.head}`);
      const e = diagnose(tr);
      post({ kind: 'ablated', snapshot: e.snap, evalLoss: e.loss, evalAccuracy: e.accuracy });
      return;
    }
    case 'probe': {
      if (!tr) return;
      const tokens = m.tokens === null ? heldOut.tokens : Int32Array.from(m.tokens);
      try {
        tr.attention(tokens); // validates (range, length) before the probe changes
      } catch (e) {
        post({ kind: 'probeRefused', message: errorOf(e).message });
        return;
      }
      probe = tokens;
      post({
        kind: 'probe',
        probe,
        probeMask: m.tokens === null ? heldOut.mask : new Uint8Array(tokens.length),
        snapshot: diagnose(tr).snap,
      });
      return;
    }
    case 'weights':
      if (!tr) return;
      post({ kind: 'weights', id: m.id, weights: tr.weights(), step: tr.step, config: { ...tr.config } });
      return;
  }
}

scope.onmessage = (e: MessageEvent<TrainRequest>) => {
  void handle(e.data).catch((err) => post({ kind: 'fatal', message: errorOf(err).message }));
};
