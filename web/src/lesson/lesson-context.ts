// What the Lesson view reads and writes: its slice of the page state, its patches and its context.
import type { LabContext } from '../ui/view';
import type { LessonState } from './state';
import type { RunModel } from './run';

export interface LessonSlice {
  model: RunModel;
  lesson: LessonState;
  page: { head: number };
}
export type LessonPatch = {
  lesson?: Partial<LessonState>;
  model?: { scale?: RunModel['scale'] };
  page?: { head?: number };
};
export interface LessonContext extends LabContext<LessonSlice, LessonPatch> {
  /** Open the guided path at its first step (the page turns a step into its whole state). */
  startPath(): void;
  hashOf(patch: { page?: { view: 'lesson' }; lesson?: Partial<LessonState> }): string;
}
