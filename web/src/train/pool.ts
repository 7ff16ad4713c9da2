// Training across Workers without changing a bit: the coordinator (the Train tab's Worker, or any
// caller holding a trainer) draws each step's batch, computes some of its fixed shards itself and
// hands the others to shard Workers that hold a replica of the weights; the shard gradients come
// back as transferred Float32Arrays and are applied in shard order (the core sums them in that
// order, whatever order they arrived in). The core cuts every batch into the same SHARDS shards
// for any Worker count, so 1, 2 or 4 Workers give the same bits (docs/train-api.md).
//
// Plain logic, no DOM and no Worker API: a port is anything that posts messages and delivers
// replies (a browser Worker, a Node worker_threads Worker, or a fake in tests). Runtime imports
// only its siblings keep-awake.ts and shard-server.ts (the shard Worker's side), re-exported here;
// tests/js/pool-module.mjs transpiles the three, so Node tests can load them as JavaScript.
import type { AttnShardResult, AttnStepBatch, AttnTrainer } from '../wasm/attn-train';
import { keepAwake } from './keep-awake';
import type { ShardReply, ShardRequest } from './shard-server';

export { COORDINATOR_AWAKE_MS, HELPER_AWAKE_MS, coordinatorAwakeMs, keepAwake } from './keep-awake';
export { ShardServer, serveShards, type ShardReply, type ShardRequest } from './shard-server';

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
  const n =
    Number.isInteger(hardwareConcurrency) && (hardwareConcurrency as number) > 0 ? (hardwareConcurrency as number) : 2;
  return Math.max(1, Math.min(4, n));
}

/**
 * Contiguous groups of the live shards for k Workers, in shard order; group 0 is the
 * coordinator's, `mine` shards long (default: an even share, rounded down), the rest split evenly
 * among the helpers. E.g. [0, 1, 2, 3] for 2 Workers: [[0, 1], [2, 3]]; for 3: [[0], [1], [2, 3]];
 * with mine = 0 and 2 Workers: [[], [0, 1, 2, 3]].
 */
export function assignShards(live: number[], k: number, mine: number | null = null): number[][] {
  if (mine === null || k === 1) mine = Math.floor(live.length / k);
  mine = Math.max(0, Math.min(live.length, k === 1 ? live.length : mine));
  const groups: number[][] = [live.slice(0, mine)];
  const rest = live.slice(mine);
  let at = 0;
  for (let w = 0; w < k - 1; w++) {
    const n = Math.floor(((w + 1) * rest.length) / (k - 1)) - Math.floor((w * rest.length) / (k - 1));
    groups.push(rest.slice(at, at + n));
    at += n;
  }
  return groups;
}

interface Waiting {
  resolve: (r: AttnShardResult[]) => void;
  reject: (e: Error) => void;
}

/** A step under way: its batch (drawn from the training stream), who computes which shards, and the helpers' answers. */
interface InFlight {
  batch: AttnStepBatch;
  groups: number[][];
  waits: Promise<AttnShardResult[]>[];
}

/**
 * The coordinator: `tr` (the session's trainer, which keeps the optimiser state, evaluates and
 * snapshots) plus helper ports. With no helpers train(n) is tr.train(n) itself.
 *
 * A step can be begun before it is finished: begin() draws the batch and sends the helpers their
 * shards, so they compute while the coordinator does other work on the same weights (the Train
 * tab evaluates and takes head scores there); finish() computes the coordinator's shards and
 * applies. A begun step stays pending through a pause: the next step is that one, so the batches
 * (and the bits) are the same whether or not a step was begun early. Who computes which shard
 * never changes a bit, so begin() may give the coordinator fewer shards when it is busy.
 */
export class ShardPool {
  private nextId = 1;
  private waiting = new Map<number, Waiting>();
  private failed: Error | null = null;
  private inFlight: InFlight | null = null;
  /** ms per shard on the coordinator (a running mean; 0 until measured) */
  shardMs = 0;
  /** how long the coordinator stays awake waiting for its helpers' shards (coordinatorAwakeMs; 0: it sleeps) */
  awakeMs = 0;
  /**
   * Adaptive: each plain step either shares the shards out ('split') or keeps them all here
   * ('solo', as one Worker would), whichever measured faster lately (ms per step, running
   * means), trying the other every 25 steps. The bits are the same either way; on a loaded
   * machine waiting for a second thread can cost more than it saves.
   */
  adaptive = false;
  private msPer = { solo: 0, split: 0 };
  private plainSteps = 0;
  /**
   * Parameter-sized arrays to reuse (weights sent to helpers, gradients): they travel to a
   * helper and back by transfer, so a step allocates none. A fresh 150 KiB array in Chromium
   * costs more than the copy into it (new pages; docs/performance.md).
   */
  private spare: Float32Array[] = [];
  private take(): Float32Array | null {
    return this.spare.pop() ?? null;
  }
  private keep(a: Float32Array): void {
    if (this.spare.length < 16 && a.length > 0) this.spare.push(a);
  }

  private constructor(
    private tr: AttnTrainer,
    private helpers: ShardPort[],
    pendingBatch: AttnStepBatch | null,
  ) {
    for (const p of helpers) {
      p.listen((m) => {
        if (m.kind === 'result') {
          if (m.params) this.keep(m.params);
          const f = this.waiting.get(m.id);
          this.waiting.delete(m.id);
          f?.resolve(m.results);
        } else if (m.kind === 'error') {
          const err = Object.assign(new Error(`A shard Worker failed: ${m.message}`), { field: m.field });
          if (m.id !== null && this.waiting.has(m.id)) {
            this.waiting.get(m.id)!.reject(err);
            this.waiting.delete(m.id);
          } else this.failed = err;
        }
      });
    }
    if (pendingBatch) this.send(pendingBatch, null);
  }

  /** Workers computing shards, the coordinator included. */
  get workers(): number {
    return this.helpers.length + 1;
  }

  /** Whether sharing the shards out pays now (always, unless adaptive and keeping them here measured faster). */
  get prefersSplit(): boolean {
    const { solo, split } = this.msPer;
    return this.helpers.length > 0 && !(this.adaptive && solo > 0 && split > 0 && solo < split);
  }

  /** Whether a step was begun and not yet finished (its batch is drawn). */
  get pending(): boolean {
    return this.inFlight !== null;
  }

  /**
   * Starts `workers - 1` helpers from `makePort` with the trainer's config and waits until each
   * has its replica. A helper that fails to start is an error (the caller may fall back to 1).
   * `pendingBatch`: a begun step of the pool this one replaces (close() returned it).
   */
  static async start(
    tr: AttnTrainer,
    workers: number,
    makePort: () => ShardPort,
    pendingBatch: AttnStepBatch | null = null,
  ): Promise<ShardPool> {
    const ports: ShardPort[] = [];
    try {
      const ready: Promise<void>[] = [];
      for (let i = 1; i < workers; i++) {
        const p = makePort();
        ports.push(p);
        ready.push(
          new Promise<void>((resolve, reject) => {
            p.listen((m) => {
              if (m.kind === 'ready') resolve();
              else if (m.kind === 'error' && m.id === null) reject(new Error(m.message));
            });
          }),
        );
        p.post({ kind: 'init', config: { ...tr.config } });
      }
      await Promise.all(ready);
    } catch (e) {
      for (const p of ports) p.terminate();
      throw e;
    }
    return new ShardPool(tr, ports, pendingBatch);
  }

  setAblation(layer: number, head: number, on: boolean): void {
    this.tr.setAblation(layer, head, on);
    for (const p of this.helpers) p.post({ kind: 'ablate', layer, head, on });
    // A begun step's helper shards used the old ablations: ask again (same batch, same step).
    const f = this.inFlight;
    if (f) this.send(f.batch, f.groups[0].length);
  }

  /** Sends the helpers their shards of `batch`; the coordinator keeps `mine` shards (null: an even share). */
  private send(batch: AttnStepBatch, mine: number | null): void {
    const tr = this.tr;
    const groups = assignShards(tr.shards(batch), this.workers, mine);
    const waits: Promise<AttnShardResult[]>[] = [];
    this.helpers.forEach((p, i) => {
      const shards = groups[i + 1];
      if (shards.length === 0) return;
      // A copy of the weights per helper (into a recycled array), transferred, not cloned, and
      // arrays for its results.
      const w = tr.params(this.take());
      const spare = shards.map(() => this.take()).filter((a): a is Float32Array => a !== null);
      const id = this.nextId++;
      const wait = new Promise<AttnShardResult[]>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
      wait.catch(() => undefined); // a superseded request may fail unobserved
      waits.push(wait);
      p.post({ kind: 'job', id, params: w, batch, shards, spare }, [
        w.buffer as ArrayBuffer,
        ...spare.map((a) => a.buffer as ArrayBuffer),
      ]);
    });
    this.inFlight = { batch, groups, waits };
  }

  /**
   * Begins the next step (if none is pending): draws its batch and sends the helpers their shards.
   * `mine`: shards the coordinator keeps (null: an even share; 0 when it has other work to do).
   */
  begin(mine: number | null = null): void {
    if (this.inFlight || this.helpers.length === 0) return;
    this.send(this.tr.nextBatch(), mine);
  }

  /** Finishes the pending step (beginning one if none is): the same bits as tr.train(1). */
  async step(): Promise<{ loss: number; gradNorm: number; finite: boolean; step: number }> {
    if (this.failed) throw this.failed;
    const tr = this.tr;
    let mode: 'solo' | 'split' | null = null;
    const t0 = performance.now();
    if (!this.inFlight) {
      if (this.helpers.length > 0) {
        if (this.adaptive) {
          const n = this.plainSteps++;
          const { solo, split } = this.msPer;
          const better = solo > 0 && split > 0 && solo < split ? 'solo' : 'split';
          const other = better === 'solo' ? 'split' : 'solo';
          mode = n < 6 ? (n % 2 ? 'solo' : 'split') : n % 25 === 0 ? other : better;
          this.begin(mode === 'solo' ? 4 : null);
        } else this.begin();
      } else {
        // No helpers: the whole batch here (as tr.train(1) does).
        const b = tr.nextBatch();
        return tr.applyGradients(
          b,
          tr.shards(b).map((s) => tr.shardGradient(b, s)),
        );
      }
    }
    const f = this.inFlight!;
    const m0 = performance.now();
    // The coordinator's shards stay in its trainer's heap (no copy out and back in).
    const mine = f.groups[0].map((s) => tr.keepShardGradient(f.batch, s));
    if (mine.length > 0)
      this.shardMs =
        this.shardMs === 0
          ? (performance.now() - m0) / mine.length
          : 0.8 * this.shardMs + 0.2 * ((performance.now() - m0) / mine.length);
    let theirs: AttnShardResult[][];
    try {
      const all = Promise.all(f.waits);
      if (this.awakeMs > 0 && f.waits.length > 0) void keepAwake(all, this.awakeMs);
      theirs = await all;
    } finally {
      if (this.inFlight === f) this.inFlight = null;
    }
    // Shard order, never arrival order: the sum's rounding depends on it.
    const all = [...mine, ...theirs.flat()].sort((a, b) => a.shard - b.shard);
    const r = tr.applyGradients(f.batch, all);
    for (const x of all) if (x.grads) this.keep(x.grads);
    if (mode) {
      const ms = performance.now() - t0;
      this.msPer[mode] = this.msPer[mode] === 0 ? ms : 0.7 * this.msPer[mode] + 0.3 * ms;
    }
    return r;
  }

  /** n steps (stopping at a non-finite one, which is reported and not applied), as tr.train(n). */
  async train(n: number): Promise<PoolReport> {
    if (this.helpers.length === 0 && !this.inFlight) return this.tr.train(n);
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
      if (this.helpers.length === 0 && done < n) {
        // The pending step is done; the rest in one call.
        const rest = this.tr.train(n - done);
        loss.set(rest.loss, done);
        gradNorm.set(rest.gradNorm, done);
        done += rest.loss.length;
        finite = rest.finite;
        break;
      }
    }
    return { step: this.tr.step, loss: loss.slice(0, done), gradNorm: gradNorm.slice(0, done), finite };
  }

  /**
   * Shards the coordinator should keep for a step during which it also has `sideMs` of other
   * work, so that it and the helpers finish together (null: no estimate yet, an even share).
   */
  share(sideMs: number, live = 4): number | null {
    if (this.shardMs <= 0) return null;
    const k = this.workers;
    const mine = Math.round((live * this.shardMs - sideMs * (k - 1)) / (this.shardMs * k));
    return Math.max(0, Math.min(Math.floor(live / k), mine));
  }

  /** Ends the helpers; returns the batch of a begun step (hand it to the next pool), or null. */
  close(): AttnStepBatch | null {
    const f = this.inFlight;
    this.inFlight = null;
    for (const p of this.helpers) p.terminate();
    this.helpers = [];
    for (const w of this.waiting.values()) w.reject(new Error('the Worker pool was closed'));
    this.waiting.clear();
    return f ? f.batch : null;
  }
}
