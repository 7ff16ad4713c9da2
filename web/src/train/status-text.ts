// The Train tab's status sentences: one line that always says where the run is now (ready,
// training, paused, stopped and why). Pure: no DOM.
import type { StopReason } from './protocol';

export function readyText(note: string, startMs: number): string {
  return `${note ? note + ' ' : ''}Ready (module and trainer started in ${Math.round(startMs)} ms). Press Play or Space.`;
}

/** While running: from which step, how many (Step 1 / Step 10) or until stopped, and the comparison. */
export function runningText(step: number, steps: number | null, compare: string | null): string {
  if (steps !== null) return `Running ${steps} step${steps === 1 ? '' : 's'} from step ${step}…`;
  return `Training from step ${step}${compare ? ` (and the comparison, ${compare})` : ''}: Pause or Space stops.`;
}

const WHY: Record<StopReason, string> = {
  paused: 'Paused',
  steps: 'Stepped',
  until: 'Stopped at the stop step',
  accuracy: 'Stopped: accuracy reached the target',
  diverged: 'Diverged',
};

export function stoppedText(reason: StopReason, step: number, autoPaused: boolean): string {
  if (reason === 'diverged') return `Stopped at step ${step}: the next step was not finite (see the notice below).`;
  return `${WHY[reason]} at step ${step}.${autoPaused ? ' (Paused while out of view; resumes when back.)' : ''}`;
}
