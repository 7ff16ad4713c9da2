// The Text model tab's Worker: one instance of the training module holding the checkpoint shown
// (runner.ts does the work). Requests are answered one at a time, in order.
/// <reference lib="webworker" />
import { loadTrain, type AttnTrainLib } from '../wasm/load-train';
import type { TextReply, TextRequest } from './protocol';
import { TextRunner } from './runner';

let runnerP: Promise<TextRunner> | null = null;
const runner = () => (runnerP ??= loadTrain().then((lib: AttnTrainLib) => new TextRunner(lib)));
let loadedKey = '';

function post(m: TextReply, transfer: Transferable[] = []): void {
  (self as unknown as DedicatedWorkerGlobalScope).postMessage(m, transfer);
}

async function handle(m: TextRequest): Promise<void> {
  try {
    const r = await runner();
    if (m.kind === 'warm') return;
    if (m.kind === 'load') {
      loadedKey = '';
      r.load(m.config, m.weights);
      loadedKey = m.key;
      post({ kind: 'loaded', id: m.id, key: m.key, roles: r.roles() });
      return;
    }
    if (m.key !== loadedKey) throw new Error(`checkpoint ${m.key} is not loaded`);
    if (m.kind === 'measure') {
      post({ kind: 'measured', id: m.id, key: m.key, measures: r.measure(m.windows, m.probe, m.ablated) });
      return;
    }
    if (m.kind === 'generate') {
      const gen = r.generate(m.ids, m.n, m.opts, m.ablated);
      post({ kind: 'generated', id: m.id, key: m.key, gen }, [
        gen.tokens.buffer,
        gen.topIds.buffer,
        gen.topProbs.buffer,
      ]);
      return;
    }
    const run = r.run(m.ids, m.ablated);
    const bufs: Transferable[] = [run.weights.buffer, run.logits.buffer];
    if (run.intactLogits) bufs.push(run.intactLogits.buffer);
    if (run.scores)
      bufs.push(
        run.scores.previous.buffer,
        run.scores.induction.buffer,
        run.scores.duplicate.buffer,
        run.scores.first.buffer,
      );
    post({ kind: 'result', id: m.id, key: m.key, run }, bufs);
  } catch (err) {
    const e = err as { message?: string; field?: string };
    post({
      kind: 'error',
      id: m.id,
      message: String(e?.message ?? err),
      field: typeof e?.field === 'string' ? e.field : null,
    });
  }
}

let queue: Promise<void> = Promise.resolve();
self.onmessage = (e: MessageEvent<TextRequest>) => {
  queue = queue.then(() => handle(e.data));
};
