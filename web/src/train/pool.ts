// Training across Workers without changing a bit: the coordinator (the Train tab's Worker, or any
// caller holding a trainer) draws each step's batch, computes some of its fixed shards itself and
// hands the others to shard Workers that hold a replica of the weights; the shard gradients come
// back as transferred Float32Arrays and are applied in shard order (the core sums them in that
// order, whatever order they arrived in). The core cuts every batch into the same SHARDS shards
// for any Worker count, so 1, 2 or 4 Workers give the same bits (docs/train-api.md).
//
// Plain logic, no DOM and no Worker API: a port is anything that posts messages and delivers
// replies (a browser Worker, a Node worker_threads Worker, or a fake in tests). Runtime imports
// none, so Node tests can load this file as transpiled JavaScript.
import type { AttnShardResult, AttnStepBatch, AttnTrainer, AttnTrainLib } from '../wasm/attn-train';

/** Coordinator -> shard Worker. */
export type ShardRequest =
  | { kind: 'init'; config: Record<string, unknown> }
  | { kind: 'ablate'; layer: number; head: number; on: boolean }
  /** compute these shards of `batch` at `params` (the coordinator's weights before this step) */
  | { kind: 'job'; id: number; params: Float32Array; batch: AttnStepBatch; shards: number[] };

/** Shard Worker -> coordinator. */
export type ShardReply =
  | { kind: 'ready' }
  | { kind: 'result'; id: number; results: AttnShardResult[] }
  | { kind: 'error'; id: number | null; message: string; field: string | null };

export interface ShardPort {
  post(m: ShardRequest, transfer?: Transferable[]): void;
  /** deliver every reply of this port to `f` */
  listen(f: (m: ShardReply) => void): void;
  terminate(): void;
}

/** What one train(n) returns: the shape of tr.train(n). */
export interface PoolReport {
  step: number;
  loss: Float32Array;
  gradNorm: Float32Array;
  finite: boolean;
}

/** The Worker count the page starts with: the cores the browser reports, 1…4 (2 when unknown). */
export function defaultWorkers(hardwareConcurrency: number | undefined): number {
  const n = Number.isInteger(hardwareConcurrency) && (hardwareConcurrency as number) > 0 ? (hardwareConcurrency as number) : 2;
  return Math.max(1, Math.min(4, n));
}

/**
 * Contiguous groups of the live shards for k Workers, in shard order; group 0 is the
 * coordinator's. E.g. [0, 1, 2, 3] for 2 Workers: [[0, 1], [2, 3]]; for 3: [[0, 1], [2], [3]].
 */
export function assignShards(live: number[], k: number): number[][] {
  const groups: number[][] = [];
  let at = 0;
  for (let w = 0; w < k; w++) {
    const n = Math.floor(((w + 1) * live.length) / k) - Math.floor((w * live.length) / k);
    groups.push(live.slice(at, at + n));
    at += n;
  }
  return groups;
}

/**
 * The shard Worker's side: one trainer replica. `handle` answers one request with the reply to
 * post and the buffers to transfer (the gradients, never copied twice).
 */
export class ShardServer {
  private tr: AttnTrainer | null = null;

  constructor(private load: () => Promise<AttnTrainLib>) {}

  async handle(m: ShardRequest): Promise<{ reply: ShardReply; transfer: Transferable[] } | null> {
    try {
      switch (m.kind) {
        case 'init': {
          const lib = await this.load();
          this.tr?.delete();
          this.tr = lib.createTrainer(m.config);
          return { reply: { kind: 'ready' }, transfer: [] };
        }
        case 'ablate':
          this.tr?.setAblation(m.layer, m.head, m.on);
          return null;
        case 'job': {
          const tr = this.tr;
          if (!tr) throw new Error('shard Worker: no trainer (init first)');
          tr.setParams(m.params);
          const results = m.shards.map((s) => tr.shardGradient(m.batch, s));
          return { reply: { kind: 'result', id: m.id, results }, transfer: results.map((r) => r.grads.buffer as ArrayBuffer) };
        }
      }
    } catch (e) {
      const err = e as { message?: string; field?: string };
      return { reply: { kind: 'error', id: m.kind === 'job' ? m.id : null, message: err?.message ?? String(e), field: err?.field ?? null }, transfer: [] };
    }
    return null;
  }
}

interface Pending {
  resolve: (r: AttnShardResult[]) => void;
  reject: (e: Error) => void;
}

/**
 * The coordinator: `tr` (the session's trainer, which keeps the optimiser state, evaluates and
 * snapshots) plus helper ports. With no helpers train(n) is tr.train(n) itself.
 */
export class ShardPool {
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private failed: Error | null = null;

  private constructor(private tr: AttnTrainer, private helpers: ShardPort[]) {
    for (const p of helpers) {
      p.listen((m) => {
        if (m.kind === 'result') {
          const f = this.pending.get(m.id);
          this.pending.delete(m.id);
          f?.resolve(m.results);
        } else if (m.kind === 'error') {
          const err = Object.assign(new Error(`A shard Worker failed: ${m.message}`), { field: m.field });
          if (m.id !== null && this.pending.has(m.id)) {
            this.pending.get(m.id)!.reject(err);
            this.pending.delete(m.id);
          } else this.failed = err;
        }
      });
    }
  }

  /** Workers computing shards, the coordinator included. */
  get workers(): number {
    return this.helpers.length + 1;
  }

  /**
   * Starts `workers - 1` helpers from `makePort` with the trainer's config and waits until each
   * has its replica. A helper that fails to start is an error (the caller may fall back to 1).
   */
  static async start(tr: AttnTrainer, workers: number, makePort: () => ShardPort): Promise<ShardPool> {
    const ports: ShardPort[] = [];
    try {
      const ready: Promise<void>[] = [];
      for (let i = 1; i < workers; i++) {
        const p = makePort();
        ports.push(p);
        ready.push(new Promise<void>((resolve, reject) => {
          p.listen((m) => {
            if (m.kind === 'ready') resolve();
            else if (m.kind === 'error' && m.id === null) reject(new Error(m.message));
          });
        }));
        p.post({ kind: 'init', config: { ...tr.config } });
      }
      await Promise.all(ready);
    } catch (e) {
      for (const p of ports) p.terminate();
      throw e;
    }
    return new ShardPool(tr, ports);
  }

  setAblation(layer: number, head: number, on: boolean): void {
    this.tr.setAblation(layer, head, on);
    for (const p of this.helpers) p.post({ kind: 'ablate', layer, head, on });
  }

  /** One step across the Workers: the same bits as tr.train(1). */
  async step(): Promise<{ loss: number; gradNorm: number; finite: boolean; step: number }> {
    if (this.failed) throw this.failed;
    const tr = this.tr;
    const batch = tr.nextBatch();
    const groups = assignShards(tr.shards(batch), this.workers);
    const waits: Promise<AttnShardResult[]>[] = [];
    this.helpers.forEach((p, i) => {
      const shards = groups[i + 1];
      if (shards.length === 0) return;
      // A fresh copy of the weights per helper, transferred, not cloned.
      const w = tr.params();
      const id = this.nextId++;
      waits.push(new Promise<AttnShardResult[]>((resolve, reject) => this.pending.set(id, { resolve, reject })));
      p.post({ kind: 'job', id, params: w, batch, shards }, [w.buffer as ArrayBuffer]);
    });
    const mine = groups[0].map((s) => tr.shardGradient(batch, s));
    const theirs = await Promise.all(waits);
    // Shard order, never arrival order: the sum's rounding depends on it.
    const all = mine.concat(...theirs).sort((a, b) => a.shard - b.shard);
    return tr.applyGradients(batch, all);
  }

  /** n steps (stopping at a non-finite one, which is reported and not applied), as tr.train(n). */
  async train(n: number): Promise<PoolReport> {
    if (this.helpers.length === 0) return this.tr.train(n);
    const loss = new Float32Array(n);
    const gradNorm = new Float32Array(n);
    let done = 0;
    let finite = true;
    while (done < n) {
      const r = await this.step();
      loss[done] = r.loss;
      gradNorm[done] = r.gradNorm;
      done++;
      if (!r.finite) {
        finite = false;
        break;
      }
    }
    return { step: this.tr.step, loss: loss.slice(0, done), gradNorm: gradNorm.slice(0, done), finite };
  }

  close(): void {
    for (const p of this.helpers) p.terminate();
    this.helpers = [];
    for (const f of this.pending.values()) f.reject(new Error('the Worker pool was closed'));
    this.pending.clear();
  }
}
