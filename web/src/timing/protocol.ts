// Messages between the timing lab and its own Worker (web/src/timing/worker.ts). Plain data.
import type { Skip, Stats, SweepParams, TimingKernel } from '../measure/model';

export interface TimingRunRequest {
  kind: 'run';
  params: SweepParams;
  budgetMs: number;
  /** Split sweeps: one port per part Worker. The page owns those Workers (it starts them and
   *  terminates them with the timing Worker), so Cancel ends every one of them itself. */
  ports?: MessagePort[];
}

export interface TimingPoint {
  t: number;
  kernel: TimingKernel;
  /** Milliseconds per call, one entry per timed sample. */
  samples: number[];
  stats: Stats;
  /** Calls per timed sample (small T is timed in batches; each sample is batch time / batch). */
  batch: number;
  warmup: number;
  /** The wasm memory of the instance that runs only this kernel, after this point, bytes (it only
   *  grows: the kernel's peak so far). With workers > 1 the calls run in the part Workers, and
   *  this is the coordinating instance only. */
  heapBytes: number;
  /** heapBytes minus that instance's memory when it had started (before any call). */
  heapGrowth: number;
  /** What the core counts against its cap for one call (core.estimateBytes or estimateMultiHeadBytes). */
  estimateBytes: number;
}

export type TimingMessage =
  | {
      kind: 'ready';
      heapBytes: number;
      heapStart: Partial<Record<TimingKernel, number>>;
      cap: number;
      tiledScratch: number;
      warmupMs: number;
    }
  | { kind: 'progress'; fraction: number; t: number; kernel: TimingKernel; text: string }
  | { kind: 'point'; point: TimingPoint }
  | { kind: 'skip'; kernel: TimingKernel; skip: Skip }
  | { kind: 'refused'; kernel: TimingKernel; t: number; message: string; field: string | null }
  | { kind: 'done'; heapBytes: number }
  | { kind: 'fatal'; message: string };
