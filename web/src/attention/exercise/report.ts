// Each check is reported to whatever embeds the page (docs/exercises.md): posted to the parent
// window (an LMS wrapper, a course site, the notebook widget) and dispatched as a DOM event from
// the panel (it bubbles to the document). The custom element re-dispatches the posted message on
// itself (app/element.ts). The message carries the link of the state that was checked, never the
// solution.

/** The message's `type` and the DOM event's name. */
export const EXERCISE_MESSAGE = 'attention-playground:exercise';

export interface ExerciseReport {
  id: string;
  passed: boolean;
  /** 0…1, rounded to 3 decimals (check.ts says what it measures for each kind). */
  score: number;
  /** Checks of this exercise since the page opened, this one included. */
  attempts: number;
  /** The share link's hash of the state that was checked. */
  state: string;
}

export type ExerciseMessage = { type: typeof EXERCISE_MESSAGE; version: 1 } & ExerciseReport;

/** A posted message is one of these when it has every field with the right type. */
export function isExerciseMessage(d: unknown): d is ExerciseMessage {
  const m = d as Partial<ExerciseMessage> | null;
  return (
    !!m &&
    m.type === EXERCISE_MESSAGE &&
    m.version === 1 &&
    typeof m.id === 'string' &&
    typeof m.passed === 'boolean' &&
    typeof m.score === 'number' &&
    typeof m.attempts === 'number' &&
    typeof m.state === 'string'
  );
}

export function reportExercise(from: HTMLElement, r: ExerciseReport): void {
  const msg: ExerciseMessage = { type: EXERCISE_MESSAGE, version: 1, ...r };
  // Any origin may embed the page; the message holds nothing the link does not.
  if (window.parent !== window) window.parent.postMessage(msg, '*');
  from.dispatchEvent(new CustomEvent(EXERCISE_MESSAGE, { detail: msg, bubbles: true, composed: true }));
}
