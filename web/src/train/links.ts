// Share links into the Train tab (preset cards, "Copy link to this step"). Separate from
// train/state.ts, which app/state.ts imports (this file imports the codec: no cycle there).
import { encodeState } from '../app/codec';
import { defaultState, normalizeState } from '../app/state';
import type { TrainState } from './config';
import { presetTrain, type TrainPreset } from './presets';

/** The hash of the Train tab with these settings (everything else at its default). */
export function trainHash(t: TrainState): string {
  const d = defaultState();
  return encodeState(normalizeState({ ...d, page: { ...d.page, view: 'train' }, train: t }).state);
}

export function trainPresetHash(p: TrainPreset): string {
  return trainHash(presetTrain(p));
}
