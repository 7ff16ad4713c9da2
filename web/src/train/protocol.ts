// Messages between the Train tab and its own module Worker (train/worker.ts), and the few
// plain definitions both sides of a run share. Plain data, no DOM.

export interface HeadScores {
  step: number;
  /** index l·H + h */
  previousToken: Float32Array;
  induction: Float32Array;
  duplicateToken: Float32Array;
  /** held-out loss with that head zeroed */
  ablationLoss: Float32Array;
  /** (L−1)·H·H, index (l·H + h1)·H + h2 */
  kComposition: Float32Array;
  /** held-out loss with the current ablations only */
  loss: number;
}

export interface Snapshot {
  scores: HeadScores;
  /** attention on the probe sequence: L·H·T·T */
  attention: Float32Array;
  /** each layer's q, k, v on the probe, as its attention read them (tr.attention's qkv) */
  layers?: { q: Float32Array; k: Float32Array; v: Float32Array }[];
  /** at the scores' step (tr.diagnostics()), on the held-out batch: mean |∂loss/∂S| per layer × head (l·H + h), S the softmax input */
  scoreGrad: Float64Array;
  /** ‖∂loss/∂W_Q‖_F per layer, same pass */
  wqGradNorm: Float64Array;
}

export type TrainRequest =
  /** workers: shard Workers incl. the trainer's own (0 = one per core, 1…4; train/pool.ts) */
  | { kind: 'init'; config: Record<string, unknown>; evalEvery: number; snapEvery: number; workers?: number }
  /** compute the next steps with this many Workers (same bits; 0 = one per core) */
  | { kind: 'workers'; workers: number }
  /** run: steps = how many (Step 1 / Step 10), or null = until paused or a stop condition */
  | { kind: 'run'; steps: number | null; until: number; untilAcc: number; speed: number }
  | { kind: 'pause' }
  | { kind: 'lr'; lr: number }
  | { kind: 'speed'; speed: number }
  | { kind: 'stop'; until: number; untilAcc: number }
  | { kind: 'ablate'; layer: number; head: number; on: boolean }
  | { kind: 'weights'; id: number }
  /** draw the attention on these tokens from now on (null = the held-out probe) */
  | { kind: 'probe'; tokens: number[] | null };

export type StopReason = 'paused' | 'steps' | 'until' | 'accuracy' | 'diverged';

export type TrainMessage =
  | {
      kind: 'ready';
      step: number;
      probe: Int32Array;
      probeMask: Uint8Array;
      snapshot: Snapshot;
      evalLoss: number;
      evalAccuracy: number;
      config: Record<string, unknown>;
      startMs: number;
      workers?: number;
    }
  /** the Worker count now in use (after init or a 'workers' request); note: why fewer than asked */
  | { kind: 'workers'; workers: number; note?: string }
  | { kind: 'refused'; message: string; field: string | null }
  | {
      kind: 'progress';
      /** step of losses[0] (1-based: the loss of step s is the loss of the batch that step s trained on) */
      firstStep: number;
      losses: Float32Array;
      gradNorms: Float32Array;
      evals: { step: number; loss: number; accuracy: number }[];
      /** head scores taken at the fixed steps (multiples of snapEvery) inside this chunk */
      scores: HeadScores[];
      /** what to draw now: the latest fixed-step scores while running, the current step at a stop */
      snapshot: Snapshot | null;
      step: number;
      /** ms inside tr.train() for these steps (GFLOP/s) and wall ms since the last progress (steps/s) */
      trainMs: number;
      wallMs: number;
      /** where the rest of the chunk went: ms evaluating, taking head scores, making the snapshot */
      sideMs?: { eval: number; scores: number; snap: number };
    }
  | { kind: 'stopped'; reason: StopReason; step: number; message?: string }
  | { kind: 'ablated'; snapshot: Snapshot; evalLoss: number; evalAccuracy: number }
  | { kind: 'weights'; id: number; weights: Record<string, unknown>; step: number; config: Record<string, unknown> }
  | { kind: 'probe'; probe: Int32Array; probeMask: Uint8Array; snapshot: Snapshot }
  | { kind: 'probeRefused'; message: string }
  | { kind: 'fatal'; message: string };

/** The trainer evaluates on the held-out batch every EVAL_EVERY steps and takes head scores every SNAP_EVERY. */
export const EVAL_EVERY = 5;
export const SNAP_EVERY = 10;

export type RunState = 'loading' | 'idle' | 'running' | 'stopped' | 'diverged' | 'refused' | 'error';

/** What a run needs of a trainer Worker's handle (train/client.ts in the page; a fake in tests). */
export interface TrainClientLike {
  start(config: Record<string, unknown>, evalEvery: number, snapEvery: number, workers?: number): void;
  send(m: TrainRequest): void;
  weights(): Promise<Extract<TrainMessage, { kind: 'weights' }> | null>;
  stop(): void;
}

/** Token ids typed by the user (spaces or commas) → ids, or a sentence saying what is wrong. */
export function parseProbe(text: string, vocab: number, seqLen: number): number[] | string {
  const parts = text
    .trim()
    .split(/[\s,]+/u)
    .filter((x) => x !== '');
  const ids = parts.map((x) => (/^\d{1,7}$/.test(x) ? Number(x) : NaN));
  if (ids.length === 0 || ids.some((x) => !Number.isInteger(x) || x >= vocab))
    return `A probe is whole token ids 0…${vocab - 1}, separated by spaces.`;
  if (ids.length > seqLen) return `A probe holds at most ${seqLen} tokens (the sequence length).`;
  return ids;
}
