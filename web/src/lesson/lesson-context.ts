// What the Lesson view reads and writes: its slice of the page state, its patches and its context.
import type { LabContext } from '../ui/view';
import type { LessonState } from './state';
import type { AttnCore } from '../wasm/attn-core';
import type { RunModel, StudentInputs } from './run';

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
  /** The student's own arrays, when "Your arrays" holds some (null: none). `key` changes whenever
   *  they do; `inputs` turns them into Q, K, V for the pictures (null for a W alone, which has no
   *  Q, K, V to run the lines on) and throws the page's refusal when they cannot be run. */
  student: { key: string; what: string; inputs(core: AttnCore): StudentInputs | null } | null;
}
