// The message an exercise's check posts to the page that embeds the playground, and the DOM event
// of the same name (docs/exercises.md). A foundation: the exercise panel sends it, the embed
// snippet and the custom element relay it, the notebook widget records it.

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
