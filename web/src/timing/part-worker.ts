// One part of a split attention call (web/src/timing/attn-split.js): a module Worker with its own wasm
// instance. The page starts it (so the page can also end it, at once) when a sweep uses more than
// one worker, and hands it a MessagePort to the timing lab's Worker, which drives it. It keeps the
// inputs of its part (copied to it once per T) and runs core.attention on them on request.
// Nothing is shared: no SharedArrayBuffer, so no cross-origin isolation is needed.
/// <reference lib="webworker" />
import { loadCore } from '../wasm/load-core';
import { coreKernel, type TimingKernel } from '../measure/model';
import type { AttnResultLike, FullOpts } from './attn-split.js';

export type PartRequest =
  | { kind: 'port'; port: MessagePort }
  | { kind: 'load'; q: Float32Array; k: Float32Array; v: Float32Array; opts: FullOpts }
  | { kind: 'call'; id: number; kernel: TimingKernel };
export type PartReply =
  | { kind: 'result'; id: number; result: AttnResultLike }
  | { kind: 'error'; id: number; message: string; field: string | null };

const scope = self as unknown as DedicatedWorkerGlobalScope;
const core = loadCore();
let part: Extract<PartRequest, { kind: 'load' }> | null = null;
/** Where requests come from and replies go: the port from the page, or this Worker's own scope. */
let channel: { postMessage(m: unknown, t?: Transferable[]): void } = scope;

const onRequest = async (e: MessageEvent<PartRequest>) => {
  const m = e.data;
  if (m.kind === 'port') {
    channel = m.port;
    m.port.onmessage = onRequest;
    return;
  }
  if (m.kind === 'load') {
    part = m;
    return;
  }
  if (m.kind !== 'call') return;
  try {
    const c = await core;
    if (!part) throw new Error('no inputs loaded');
    const r = c.attention(part.q, part.k, part.v, { ...part.opts, ...coreKernel(m.kernel) });
    const result: AttnResultLike = {
      output: r.output,
      weights: r.weights,
      entropy: r.entropy,
      lse: r.lse,
      fullyMaskedRows: r.fullyMaskedRows,
      nanRows: r.nanRows,
      infScoreRows: r.infScoreRows,
      nanRowsPerHead: Array.from(r.nanRowsPerHead),
      scale: r.scale,
    };
    const transfer = [
      r.output.buffer,
      r.entropy.buffer,
      r.lse.buffer,
      ...(r.weights ? [r.weights.buffer] : []),
    ] as ArrayBuffer[];
    channel.postMessage({ kind: 'result', id: m.id, result } satisfies PartReply, transfer);
  } catch (err) {
    const x = err as Error & { field?: string };
    channel.postMessage({
      kind: 'error',
      id: m.id,
      message: String(x?.message ?? err),
      field: typeof x?.field === 'string' ? x.field : null,
    } satisfies PartReply);
  }
};
scope.onmessage = onRequest;
