// The Train tab's speed readout, without the DOM: steps per second and GFLOP/s since the last
// Play (the controls show them), and where a trainer's wall time went over its whole run (the
// train-tab bench reads `split`). Fed from the Worker's progress messages (train/session.ts).
import type { TrainMessage } from './protocol';

type Progress = Extract<TrainMessage, { kind: 'progress' }>;

export class Throughput {
  stepsPerSec = 0;
  gflops = 0;
  /** ms totals of this trainer's run (the bench reads them: where the wall time goes) */
  split = { steps: 0, wall: 0, train: 0, eval: 0, scores: 0, snap: 0 };
  /** since the last Play: the rates above are these ratios */
  private rate = { steps: 0, wallMs: 0, trainMs: 0, flops: 0 };

  /** A new trainer: `flopsPerStep` of its model, every total back to 0. */
  restart(flopsPerStep: number): void {
    this.rate = { steps: 0, wallMs: 0, trainMs: 0, flops: flopsPerStep };
    this.stepsPerSec = 0;
    this.gflops = 0;
    this.split = { steps: 0, wall: 0, train: 0, eval: 0, scores: 0, snap: 0 };
  }

  /** Play: the rates count from here (the run's split keeps its totals). */
  resume(): void {
    this.rate.steps = 0;
    this.rate.wallMs = 0;
    this.rate.trainMs = 0;
  }

  add(m: Progress): void {
    if (m.losses.length === 0) return;
    this.rate.steps += m.losses.length;
    this.rate.wallMs += m.wallMs;
    this.rate.trainMs += m.trainMs;
    if (m.sideMs) {
      this.split.eval += m.sideMs.eval;
      this.split.scores += m.sideMs.scores;
      this.split.snap += m.sideMs.snap;
    }
    this.split.train += m.trainMs;
    this.split.wall += m.wallMs;
    this.split.steps += m.losses.length;
    if (this.rate.wallMs > 0) this.stepsPerSec = (this.rate.steps / this.rate.wallMs) * 1000;
    if (this.rate.trainMs > 0) this.gflops = (this.rate.steps * this.rate.flops) / (this.rate.trainMs * 1e6);
  }
}
