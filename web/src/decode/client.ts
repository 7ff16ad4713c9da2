// The Decode tab's Workers: one that holds the model (stepping), and a fresh one per timing run.
// Cancel terminates the Worker concerned, which stops even a call running inside wasm; the
// stepping Worker is then started again on the next request.
import type { TrainedModel } from '../shared/trained-model';
import type { DecodeMessage, DecodeRequest, TimingParams } from './protocol';
import { workerBlockedMessage } from '../wasm/core-build';

function spawn(name: string): Worker {
  return new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name });
}

export class DecodeClient {
  private stepper: Worker | null = null;
  private timer: Worker | null = null;

  constructor(private onStep: (m: DecodeMessage) => void) {}

  get timing(): boolean {
    return this.timer !== null;
  }

  private ensure(): Worker | null {
    if (this.stepper) return this.stepper;
    let w: Worker;
    try {
      w = spawn('attention-decode');
    } catch (err) {
      this.onStep({ kind: 'fatal', message: workerBlockedMessage('decoder', err) });
      return null;
    }
    w.onmessage = (e: MessageEvent<DecodeMessage>) => this.stepper === w && this.onStep(e.data);
    w.onerror = (e) => {
      e.preventDefault();
      if (this.stepper !== w) return;
      this.stepper = null;
      w.terminate();
      this.onStep({
        kind: 'fatal',
        message: `The decode worker failed: ${e.message || 'unknown error (is WebAssembly allowed?)'}`,
      });
    };
    this.stepper = w;
    return w;
  }

  private send(m: DecodeRequest): void {
    this.ensure()?.postMessage(m);
  }

  setModel(model: TrainedModel | null, normalizer?: 'linear'): void {
    this.send(normalizer ? { kind: 'model', model, normalizer } : { kind: 'model', model });
  }

  trajectory(seq: number, keep: number): void {
    this.send({ kind: 'trajectory', seq, keep });
  }

  /** Stop the stepping Worker (training or decoding) now. */
  cancelStepper(): boolean {
    const w = this.stepper;
    if (!w) return false;
    this.stepper = null;
    w.terminate();
    return true;
  }

  runTiming(params: TimingParams, budgetMs: number, on: (m: DecodeMessage) => void): void {
    this.cancelTiming();
    let w: Worker;
    try {
      w = spawn('attention-decode-timing');
    } catch (err) {
      on({ kind: 'fatal', message: workerBlockedMessage('decoding timer', err) });
      return;
    }
    this.timer = w;
    const finish = () => {
      if (this.timer === w) this.timer = null;
      w.terminate(); // frees the run's wasm heap
    };
    w.onmessage = (e: MessageEvent<DecodeMessage>) => {
      if (this.timer !== w) return;
      if (e.data.kind === 'done' || e.data.kind === 'fatal') finish();
      on(e.data);
    };
    w.onerror = (e) => {
      e.preventDefault();
      if (this.timer !== w) return;
      finish();
      on({ kind: 'fatal', message: `The timing worker failed: ${e.message || 'unknown error'}` });
    };
    w.postMessage({ kind: 'timing', params, budgetMs } satisfies DecodeRequest);
  }

  cancelTiming(): boolean {
    const w = this.timer;
    if (!w) return false;
    this.timer = null;
    w.terminate();
    return true;
  }
}
