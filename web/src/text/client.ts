// The Text model tab's handle on its Worker, as a TextBackend (session.ts): each request gets
// its reply as a promise. A Worker that fails is dropped; the next request starts another.
import type { TextWeights } from './model-files';
import type { TextReply, TextRequest } from './protocol';
import type { AblationMeasures, GenOptions, GenRun, ProbeSpec, RoleTable, TextRun } from './runner';
import type { TextBackend } from './session';
import { workerBlockedMessage } from '../wasm/core-build';

/** A refusal from the Worker (the module's AttnError, or a failed Worker). */
export class TextWorkerError extends Error {
  constructor(
    message: string,
    readonly field: string | null,
  ) {
    super(message);
    this.name = 'TextWorkerError';
  }
}

export class TextClient implements TextBackend {
  private worker: Worker | null = null;
  private nextId = 1;
  private waiting = new Map<number, { ok: (m: TextReply) => void; fail: (e: Error) => void }>();

  private ensure(): Worker {
    if (this.worker) return this.worker;
    let w: Worker;
    try {
      w = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'attention-text' });
    } catch (err) {
      throw new TextWorkerError(workerBlockedMessage('text model', err), null);
    }
    w.onmessage = (e: MessageEvent<TextReply>) => {
      if (this.worker !== w) return;
      const m = e.data;
      const p = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (!p) return;
      if (m.kind === 'error') p.fail(new TextWorkerError(m.message, m.field));
      else p.ok(m);
    };
    w.onerror = (e) => {
      e.preventDefault();
      if (this.worker !== w) return;
      this.stop(`The text model's worker failed: ${e.message || 'unknown error (is WebAssembly allowed?)'}`);
    };
    this.worker = w;
    return w;
  }

  private ask(m: TextRequest, transfer: Transferable[] = []): Promise<TextReply> {
    return new Promise((ok, fail) => {
      let w: Worker;
      try {
        w = this.ensure();
      } catch (err) {
        fail(err as Error);
        return;
      }
      this.waiting.set(m.id, { ok, fail });
      w.postMessage(m, transfer);
    });
  }

  /** Start the Worker and its module now; a failure shows on the next request. */
  warm(): void {
    try {
      this.ensure().postMessage({ kind: 'warm', id: 0 } satisfies TextRequest);
    } catch {
      // The Worker is refused: the first real request says so.
    }
  }

  async load(key: string, config: Record<string, unknown>, weights: TextWeights): Promise<RoleTable> {
    // Copied, not transferred: the session keeps the checkpoint for the next visit to it.
    const r = await this.ask({ kind: 'load', id: this.nextId++, key, config, weights });
    if (r.kind !== 'loaded') throw new TextWorkerError('unexpected reply', null);
    return r.roles;
  }

  async run(key: string, ids: Int32Array, ablated: [number, number][]): Promise<TextRun> {
    const r = await this.ask({ kind: 'run', id: this.nextId++, key, ids: ids.slice(), ablated });
    if (r.kind !== 'result') throw new TextWorkerError('unexpected reply', null);
    return r.run;
  }

  async generate(
    key: string,
    ids: Int32Array,
    n: number,
    opts: GenOptions,
    ablated: [number, number][],
  ): Promise<GenRun> {
    const r = await this.ask({ kind: 'generate', id: this.nextId++, key, ids: ids.slice(), n, opts, ablated });
    if (r.kind !== 'generated') throw new TextWorkerError('unexpected reply', null);
    return r.gen;
  }

  async measure(
    key: string,
    windows: Int32Array,
    probe: ProbeSpec,
    ablated: [number, number][],
  ): Promise<AblationMeasures> {
    const r = await this.ask({ kind: 'measure', id: this.nextId++, key, windows, probe, ablated });
    if (r.kind !== 'measured') throw new TextWorkerError('unexpected reply', null);
    return r.measures;
  }

  stop(reason = 'stopped'): void {
    this.worker?.terminate();
    this.worker = null;
    for (const p of this.waiting.values()) p.fail(new TextWorkerError(reason, null));
    this.waiting.clear();
  }
}
