// Each check is reported to whatever embeds the page (docs/exercises.md): posted to the parent
// window (an LMS wrapper, a course site, the notebook widget) and dispatched as a DOM event from
// the panel (it bubbles to the document). The custom element re-dispatches the posted message on
// itself (app/element.ts). The message carries the link of the state that was checked, never the
// solution.
import { EXERCISE_MESSAGE, type ExerciseMessage, type ExerciseReport } from '../../shared/exercise-message';

export function reportExercise(from: HTMLElement, r: ExerciseReport): void {
  const msg: ExerciseMessage = { type: EXERCISE_MESSAGE, version: 1, ...r };
  // Any origin may embed the page; the message holds nothing the link does not.
  if (window.parent !== window) window.parent.postMessage(msg, '*');
  from.dispatchEvent(new CustomEvent(EXERCISE_MESSAGE, { detail: msg, bubbles: true, composed: true }));
}
