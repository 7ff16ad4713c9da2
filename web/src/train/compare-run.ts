// Compare: a second trainer on the same data seed with one setting changed (its curves are drawn
// dashed). It follows the main run's Play/Step/Pause (the session sends both the same messages)
// and keeps its own history; it stops at its own accuracy. No DOM.
import { History } from './history';
import { trainerConfig, type TrainState } from './config';
import { EVAL_EVERY, SNAP_EVERY, type RunState, type TrainClientLike, type TrainMessage } from './protocol';

export interface CompareRun {
  client: TrainClientLike;
  history: History;
  run: RunState;
  label: string;
  step: number;
}

export interface CompareOwner {
  /** whether this run is still the session's comparison (a newer one replaces it) */
  isCurrent(r: CompareRun): boolean;
  mainRunning(): boolean;
  sendRun(client: TrainClientLike): void;
  changed(): void;
  refused(text: string): void;
}

/** Start the comparison trainer with settings `c` (the main run's settings are `t`). */
export function startCompareRun(
  c: TrainState,
  t: TrainState,
  label: string,
  newClient: (on: (m: TrainMessage) => void) => TrainClientLike,
  owner: CompareOwner,
): CompareRun {
  const cmp: CompareRun = {
    client: null as unknown as TrainClientLike,
    history: new History(),
    run: 'loading',
    label,
    step: 0,
  };
  cmp.client = newClient((m) => {
    if (!owner.isCurrent(cmp)) return;
    if (m.kind === 'ready') {
      cmp.run = 'idle';
      cmp.history.pushEval(0, m.evalLoss, m.evalAccuracy);
      if (t.lr !== m.config.lr) cmp.client.send({ kind: 'lr', lr: t.lr });
      if (owner.mainRunning()) owner.sendRun(cmp.client);
    } else if (m.kind === 'progress') {
      cmp.history.pushLosses(m.firstStep, m.losses, m.gradNorms);
      for (const e of m.evals) cmp.history.pushEval(e.step, e.loss, e.accuracy);
      cmp.step = m.step;
      owner.changed();
    } else if (m.kind === 'stopped') {
      cmp.run = m.reason === 'diverged' ? 'diverged' : 'stopped';
    } else if (m.kind === 'refused' || m.kind === 'fatal') {
      cmp.run = 'refused';
      owner.refused(`The comparison run (${label}) was refused: ${m.message}`);
    }
  });
  cmp.client.start(trainerConfig(c), EVAL_EVERY, SNAP_EVERY);
  return cmp;
}
