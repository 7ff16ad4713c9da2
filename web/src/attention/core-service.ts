// The compute service: loads the wasm core once and answers compute / study / check requests.
// The compute Worker runs it; where a Worker cannot be created (a frame sandboxed without
// allow-same-origin has an opaque origin, and `new Worker(url)` throws SecurityError there) the
// page runs the same service on its own thread (worker-client.ts), so the views still draw.
// Errors from the core (bad input) come back as data; the page keeps its last good view.
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromWorkerName } from '../wasm/core-build';
import { Computer, coreRefusal, resultArrays } from './compute';
import { memoryTable } from '../measure/model';
import type { WorkerRequest, WorkerResponse, StudyResult } from './protocol';

export type Post = (msg: WorkerResponse, transfer?: Transferable[]) => void;

/** name: the Worker's name (it carries the page's ?core= preference). */
export function createCoreService(name: string, post: Post): (req: WorkerRequest) => Promise<void> {
  let corePromise: Promise<AttnCore> | null = null;
  // Keeps the last example and its Q, K, V across requests (a mask change reuses them).
  let computer: Computer | null = null;
  let study: StudyResult | null = null;

  function sharedCore(): Promise<AttnCore> {
    if (!corePromise) {
      computer = null;
      corePromise = loadCore(preferenceFromWorkerName(name));
      corePromise.catch(() => {
        corePromise = null;
      });
    }
    return corePromise;
  }

  return async (req: WorkerRequest): Promise<void> => {
    let core: AttnCore;
    try {
      core = await sharedCore();
    } catch (err) {
      post({
        kind: req.kind,
        id: req.id,
        ok: false,
        error: {
          message: `The WebAssembly core could not be loaded: ${String((err as Error)?.message ?? err)}`,
          field: null,
          fatal: true,
        },
      });
      return;
    }
    if (!computer || computer.core !== core) computer = new Computer(core);
    try {
      if (req.kind === 'recycle') {
        computer.pool.give(req.arrays);
        return;
      }
      if (req.kind === 'study') {
        if (!study) {
          const r = core.entropyStudy({ dks: [1, 4, 16, 64, 256, 1024], keys: 16, queries: 1000, seed: 0 });
          study = {
            dk: Array.from(r.dk),
            scaled: Array.from(r.scaled),
            unscaled: Array.from(r.unscaled),
            ceiling: r.ceiling,
          };
        }
        post({ kind: 'study', id: req.id, ok: true, study });
        return;
      }
      if (req.kind === 'check') {
        post({ kind: 'check', id: req.id, ok: true, check: computer.check(req.state) });
        return;
      }
      if (req.kind === 'about') {
        post({
          kind: 'about',
          id: req.id,
          ok: true,
          about: { relaxedSimd: core.limits.relaxedSimd === true, prefer: preferenceFromWorkerName(name) },
        });
        return;
      }
      if (req.kind === 'memory') {
        post({ kind: 'memory', id: req.id, ok: true, memory: memoryTable(core, req.params) });
        return;
      }
      const result = computer.compute(req.state);
      const transfer = [...resultArrays(result), result.allowed].map((a) => a.buffer as ArrayBuffer);
      post({ kind: 'compute', id: req.id, ok: true, result }, transfer);
    } catch (err) {
      const refusal = coreRefusal(err);
      if (!refusal) corePromise = null; // an unexpected failure: start a fresh instance next time
      post({
        kind: req.kind,
        id: req.id,
        ok: false,
        error: refusal ?? { message: String((err as Error)?.message ?? err), field: null, fatal: false },
      });
    }
  };
}
