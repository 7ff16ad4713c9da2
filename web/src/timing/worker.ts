// The timing lab's own Worker: separate wasm instances, so a sweep never delays the heatmaps'
// compute Worker. It runs one sweep per Worker; the page cancels by terminating it.
// Each kernel runs in its own wasm instance, so the memory each one needed is measured, not
// inferred: a WebAssembly memory only grows, and the instance that ran only the naive kernel
// grew by what the naive kernel needed (its peak so far, in 64 KiB pages, allocator slack and
// the copied inputs included), likewise for the tiled one.
/// <reference lib="webworker" />
import { loadCore, type AttnCore } from '../wasm/load-core';
import type { TimingMessage, TimingRunRequest } from './protocol';
import { mergeParts, partCall, planSplit, type AttnResultLike, type FullOpts } from './attn-split.js';
import type { PartReply, PartRequest } from './part-worker';
import {
  batchSize,
  checkBudget,
  coreBytes,
  coreKernel,
  plannedCalls,
  predictQuadratic,
  stats,
  sweepTs,
  type SweepParams,
  type TimingKernel,
} from '../measure/model';

const MIN_POINT_MS = 250;
const MAX_SAMPLES = 25;

function post(m: TimingMessage): void {
  (self as unknown as DedicatedWorkerGlobalScope).postMessage(m);
}

function heap(core: AttnCore): number {
  return core.heapBytes();
}

/** Uniform(−a, a) values: the timing does not depend on the distribution. */
function rand(n: number, a = 1): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = (Math.random() * 2 - 1) * a;
  return x;
}

interface Inputs {
  /** Synchronous in this Worker's own instance; a Promise when the call is split across part Workers. */
  call(kernel: TimingKernel): void | Promise<void>;
}

/**
 * The part Workers of a split call, reached through the ports the page passed in: module Workers
 * with their own wasm instances, which the page starts per sweep and terminates (with this Worker)
 * when the sweep ends or is cancelled. Nested Workers are avoided on purpose: the page cannot end
 * those itself, and ending them through their parent was not always prompt.
 */
class PartPool {
  private workers: MessagePort[] = [];
  private next = 1;
  private pending = new Map<number, { resolve: (r: AttnResultLike) => void; reject: (e: Error) => void }>();

  constructor(ports: MessagePort[]) {
    for (const w of ports) {
      w.onmessage = (e: MessageEvent<PartReply>) => {
        const m = e.data;
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.kind === 'result') p.resolve(m.result);
        else p.reject(Object.assign(new Error(m.message), { field: m.field ?? undefined }));
      };
      w.onmessageerror = () => {
        const err = new Error('a part worker sent a message that could not be read');
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      };
      this.workers.push(w);
    }
  }

  /** Copy each part's inputs to its Worker (transferred: the copies are made by partCall). */
  load(parts: { q: Float32Array; k: Float32Array; v: Float32Array; opts: FullOpts }[]): void {
    parts.forEach((c, i) => {
      const m: PartRequest = { kind: 'load', ...c };
      const bufs = [c.q.buffer, c.k.buffer, c.v.buffer] as ArrayBuffer[];
      this.workers[i].postMessage(m, bufs);
    });
  }

  call(kernel: TimingKernel, nParts: number): Promise<AttnResultLike[]> {
    return Promise.all(
      this.workers.slice(0, nParts).map(
        (w) =>
          new Promise<AttnResultLike>((resolve, reject) => {
            const id = this.next++;
            this.pending.set(id, { resolve, reject });
            w.postMessage({ kind: 'call', id, kernel } satisfies PartRequest);
          }),
      ),
    );
  }

  done(): void {
    for (const w of this.workers) w.close();
    this.workers = [];
  }
}

type Cores = Partial<Record<TimingKernel, AttnCore>>;

/** Random inputs for one T, generated once and shared by both kernels and all repeats; each
 *  kernel calls its own instance. */
function makeInputs(cores: Cores, p: SweepParams, t: number, pool: PartPool | null): Inputs {
  const { heads: h, dk, dModel } = p;
  if (p.mode === 'qkv') {
    const q = rand(h * t * dk),
      k = rand(h * t * dk),
      v = rand(h * t * dk);
    const opts = { heads: h, tq: t, tk: t, dk, dv: dk, causal: p.causal };
    if (pool) {
      const any = (cores.naive ?? cores.tiled ?? cores.linear)!;
      // The split follows the core's causal rule (attn-split.js never restates it).
      const ranges = p.causal ? any.keyRanges({ t, causal: true }) : null;
      const sopts = { ...opts, ranges };
      // Split across the part Workers (by heads when H ≥ workers, else by query rows); the timed
      // call posts to each, waits for every part and merges them into the single call's layout.
      const plan = planSplit(sopts, p.workers ?? 1);
      pool.load(plan.parts.map((part) => partCall(q, k, v, sopts, part)));
      return { call: async (kernel) => void mergeParts(sopts, plan, await pool.call(kernel, plan.parts.length)) };
    }
    return { call: (kernel) => void cores[kernel]!.attention(q, k, v, { ...opts, ...coreKernel(kernel) }) };
  }
  const hd = h * dk;
  const w = 1 / Math.sqrt(dModel);
  const x = rand(t * dModel),
    wq = rand(dModel * hd, w),
    wk = rand(dModel * hd, w),
    wv = rand(dModel * hd, w),
    wo = rand(hd * dModel, w);
  return {
    call: (kernel) =>
      void cores[kernel]!.multiHeadAttention(x, wq, wk, wv, wo, {
        t,
        dModel,
        heads: h,
        dk,
        dv: dk,
        causal: p.causal,
        ...coreKernel(kernel),
      }),
  };
}

async function timeOnce(inp: Inputs, kernel: TimingKernel, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = inp.call(kernel);
    if (r) await r; // wall-clock of the split call: post, all parts, merge
  }
  return (performance.now() - t0) / n;
}

async function run(req: TimingRunRequest): Promise<void> {
  const p = req.params;
  const cores: Cores = {};
  const heapStart: Partial<Record<TimingKernel, number>> = {};
  for (const kernel of p.kernels) {
    const c = await loadCore();
    cores[kernel] = c;
    heapStart[kernel] = heap(c);
  }
  const core = (cores.naive ?? cores.tiled ?? cores.linear)!;
  const ts = sweepTs(p.tStart, p.tEnd);
  const pool = p.mode === 'qkv' && (p.workers ?? 1) > 1 && req.ports?.length ? new PartPool(req.ports) : null;

  // Global warm-up: many short calls let the engine replace its baseline code with optimised code
  // (a call that is already running is never upgraded).
  const w0 = performance.now();
  const tw = Math.min(128, ts[0]);
  const warm = makeInputs(cores, p, tw, pool);
  for (const kernel of p.kernels) {
    // Batches of ~10 ms until the best per-call time stops improving (the optimised code has
    // arrived), at least 0.3 s and at most 2 s per kernel.
    const start = performance.now();
    const batch = batchSize(await timeOnce(warm, kernel, 1), 10);
    let best = Infinity;
    let calm = 0;
    while (performance.now() - start < 2500) {
      const ms = await timeOnce(warm, kernel, batch);
      if (ms < best * 0.97) calm = 0;
      else calm++;
      best = Math.min(best, ms);
      if (calm >= 8 && performance.now() - start > 1000) break;
    }
  }
  post({
    kind: 'ready',
    heapBytes: heap(core),
    heapStart,
    cap: core.limits.memoryCap,
    tiledScratch: core.tiledScratchBytes(p.dk),
    warmupMs: performance.now() - w0,
  });

  // Progress is weighted by T² (the cost of a point), so the bar moves like the clock.
  const weight = (t: number) => t * t * p.kernels.length;
  const total = ts.reduce((a, t) => a + weight(t), 0);
  let doneWeight = 0;
  const prev = new Map<TimingKernel, { t: number; ms: number }>();
  const stopped = new Set<TimingKernel>();

  for (const t of ts) {
    const active: TimingKernel[] = [];
    for (const kernel of p.kernels) {
      if (stopped.has(kernel)) continue;
      const skip = checkBudget(
        coreBytes(core, p, t, kernel),
        core.limits.memoryCap,
        t,
        prev.get(kernel) ?? null,
        req.budgetMs,
      );
      if (skip) {
        stopped.add(kernel);
        post({ kind: 'skip', kernel, skip });
      } else active.push(kernel);
    }
    if (active.length === 0) break;
    const inputs = makeInputs(cores, p, t, pool);
    for (const kernel of active) {
      const share = weight(t) / p.kernels.length;
      const progress = (frac: number, text: string) =>
        post({ kind: 'progress', fraction: (doneWeight + share * frac) / total, t, kernel, text });
      try {
        const last = prev.get(kernel);
        const predicted = last ? predictQuadratic(last.ms, last.t, t) : NaN;
        progress(0, `T = ${t}, ${kernel}: warming up`);
        // The first call also grows the wasm heap for this size; its time is not kept.
        let est = await timeOnce(inputs, kernel, 1);
        const plan = plannedCalls(Number.isFinite(predicted) ? Math.max(predicted, est) : est);
        for (let i = 1; i < plan.warmup; i++) est = Math.min(est, await timeOnce(inputs, kernel, 1));
        const batch = batchSize(est);
        const samples: number[] = [];
        // Fast points keep sampling for at least MIN_POINT_MS, so a short burst of other work on the
        // machine cannot move their median.
        let spent = 0;
        for (let r = 0; r < plan.repeats || (spent < MIN_POINT_MS && r < MAX_SAMPLES); r++) {
          progress(
            Math.min(1, (r + 1) / (plan.repeats + 1)),
            `T = ${t}, ${kernel}: repeat ${r + 1} of ${Math.max(plan.repeats, r + 1)}${batch > 1 ? ` (${batch} calls each)` : ''}`,
          );
          const ms = await timeOnce(inputs, kernel, batch);
          samples.push(ms);
          spent += ms * batch;
        }
        const st = stats(samples);
        prev.set(kernel, { t, ms: st.median });
        const kernelHeap = heap(cores[kernel]!);
        post({
          kind: 'point',
          point: {
            t,
            kernel,
            samples,
            stats: st,
            batch,
            warmup: plan.warmup,
            heapBytes: kernelHeap,
            heapGrowth: kernelHeap - heapStart[kernel]!,
            estimateBytes: coreBytes(core, p, t, kernel),
          },
        });
      } catch (err) {
        const e = err as Error & { field?: string };
        stopped.add(kernel);
        post({
          kind: 'refused',
          kernel,
          t,
          message: String(e?.message ?? err),
          field: typeof e?.field === 'string' ? e.field : null,
        });
      }
      doneWeight += weight(t) / p.kernels.length;
    }
  }
  pool?.done();
  post({ kind: 'done', heapBytes: heap(core) });
}

self.onmessage = (e: MessageEvent<TimingRunRequest>) => {
  if (e.data?.kind !== 'run') return;
  run(e.data).catch((err) =>
    post({ kind: 'fatal', message: `The timing worker failed: ${String((err as Error)?.message ?? err)}` }),
  );
};
