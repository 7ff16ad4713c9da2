// The shard Worker's side of the pool: the messages it answers, its handler (serveShards) and its trainer replica.
import type { AttnShardResult, AttnStepBatch, AttnTrainer, AttnTrainLib } from '../wasm/attn-train';
import { HELPER_AWAKE_MS, keepAwake } from './keep-awake';

/** Coordinator -> shard Worker. */
export type ShardRequest =
  | { kind: 'init'; config: Record<string, unknown> }
  | { kind: 'ablate'; layer: number; head: number; on: boolean }
  /** compute these shards of `batch` at `params` (the coordinator's weights before this step) */
  | { kind: 'job'; id: number; params: Float32Array; batch: AttnStepBatch; shards: number[]; spare?: Float32Array[] };

/** Shard Worker -> coordinator. */
export type ShardReply =
  | { kind: 'ready' }
  /** `params`: the job's weights buffer, handed back for the next job */
  | { kind: 'result'; id: number; results: AttnShardResult[]; params?: Float32Array }
  | { kind: 'error'; id: number | null; message: string; field: string | null };

/**
 * A shard Worker's message handler around `server`: requests one at a time in arrival order (an
 * ablation must land before the next job), each reply posted with its transfers; after a job's
 * reply the thread stays awake up to `awakeMs` for the next request (keepAwake).
 */
export function serveShards(
  server: ShardServer,
  post: (reply: ShardReply, transfer: Transferable[]) => void,
  awakeMs = HELPER_AWAKE_MS,
): (m: ShardRequest) => void {
  let queue: Promise<void> = Promise.resolve();
  let arrived: (() => void) | null = null;
  return (m) => {
    arrived?.();
    arrived = null;
    queue = queue.then(async () => {
      const out = await server.handle(m);
      if (!out) return;
      post(out.reply, out.transfer);
      if (awakeMs > 0 && out.reply.kind === 'result')
        void keepAwake(
          new Promise<void>((r) => {
            arrived = r;
          }),
          awakeMs,
        );
    });
  };
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
          const tr = lib.createTrainer(m.config);
          this.tr = tr;
          // Warm-up on a batch of the replica's own stream (never used for training): the engine
          // compiles the hot functions optimised before the first real job, not during it.
          const b = tr.nextBatch();
          for (let i = 0; i < 2; i++) for (const s of tr.shards(b)) tr.shardGradient(b, s);
          return { reply: { kind: 'ready' }, transfer: [] };
        }
        case 'ablate':
          this.tr?.setAblation(m.layer, m.head, m.on);
          return null;
        case 'job': {
          const tr = this.tr;
          if (!tr) throw new Error('shard Worker: no trainer (init first)');
          tr.setParams(m.params);
          // Results go into the spare arrays the coordinator sent (fresh ones if none).
          const spare = m.spare ?? [];
          const results = m.shards.map((s, i) => tr.shardGradient(m.batch, s, spare[i] ?? null));
          const transfer = results.map((r) => r.grads.buffer as ArrayBuffer);
          transfer.push(m.params.buffer as ArrayBuffer);
          return { reply: { kind: 'result', id: m.id, results, params: m.params }, transfer };
        }
      }
    } catch (e) {
      const err = e as { message?: string; field?: string };
      return {
        reply: {
          kind: 'error',
          id: m.kind === 'job' ? m.id : null,
          message: err?.message ?? String(e),
          field: err?.field ?? null,
        },
        transfer: [],
      };
    }
    return null;
  }
}
