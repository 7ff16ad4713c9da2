// Share links to the Train tab (experiment cards, "Copy link to this step"). The link format is
// the page's (its codec over the whole state), so the page hands its writer in: `hashOf` lays a
// patch over the default state, normalizes it and encodes it (app/state.ts hashOf).
import type { TrainState } from './config';
import { presetTrain, type TrainPreset } from './presets';

/** The patch a Train link lays over the default state. */
export type TrainLinkPatch = { page: { view: 'train' }; train: TrainState };
export type HashOf = (patch: TrainLinkPatch) => string;

/** The hash of the Train tab with these settings (everything else at its default). */
export function trainHash(t: TrainState, hashOf: HashOf): string {
  return hashOf({ page: { view: 'train' }, train: t });
}

export function trainPresetHash(p: TrainPreset, hashOf: HashOf): string {
  return trainHash(presetTrain(p), hashOf);
}
