// The experiment cards' runs, without DOM. Each card runs the core and states only numbers its
// run measured: `figures` holds them by name (the browser test reads them from the page), and the
// card's sentences are written from them. Input data is made by the cards (a row of chosen logits, a
// seeded permutation of keys and values); every attention result is the core's.
// This file holds the card for an id and the cards' titles; the cards themselves are in
// example-cards.ts, size-cards.ts and variant-cards.ts, their shared words in card-format.ts.
import type { AttnCore, Precision } from '../wasm/attn-core';
import type { RunModel } from './run';
import type { ExperimentId } from './experiment-ids';
import type { CardResult } from './card-format';
import { afterCard, amplifyCard, loopCard, shiftCard, shuffleCard } from './example-cards';
import { costCard, flashCard, sqrtCard } from './size-cards';
import { VARIANT_CARDS, VARIANT_CARD_IDS, variantCard, type VariantCardId } from './variant-cards';

export { scaleWords, type CardResult } from './card-format';
export {
  afterCard,
  amplifyCard,
  loopCard,
  overflowThreshold,
  permutation,
  shiftCard,
  shuffleCard,
} from './example-cards';
export { COST_TS, FLASH_D, FLASH_TS, LESSON2_MODEL, SQRT_DKS, costCard, flashCard, sqrtCard } from './size-cards';
export { VARIANT_CARD_IDS, variantCard, type VariantCardId } from './variant-cards';

/** The card for an id (the shift card needs its slider and precision, the FlashAttention card its
 *  on-chip memory; the cards on the example measure the head drawn). */
export function runCard(
  core: AttnCore,
  id: ExperimentId,
  m: RunModel,
  logit: number,
  precision: Precision,
  sramKiB = 64,
  head = 0,
): CardResult {
  switch (id) {
    case 'shift':
      return shiftCard(core, logit, precision);
    case 'after':
      return afterCard(core, m, head);
    case 'shuffle':
      return shuffleCard(core, m);
    case 'amplify':
      return amplifyCard(core, m, head);
    case 'loop':
      return loopCard(core, m);
    case 'sqrtdk':
      return sqrtCard(core);
    case 'cost':
      return costCard();
    case 'flash':
      return flashCard(core, sramKiB);
    default:
      return variantCard(core, m, id, head);
  }
}

export const CARD_TITLES: Record<ExperimentId, string> = {
  shift: 'Max shift off',
  after: '−∞ before vs zero after',
  shuffle: 'Shuffle the keys and values',
  amplify: 'Cannot amplify',
  loop: 'Heads as a loop',
  sqrtdk: 'Why √d_k, measured',
  cost: 'Does each doubling quadruple the time?',
  flash: 'What FlashAttention makes linear',
  ...(Object.fromEntries(VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].title])) as Record<VariantCardId, string>),
};
/** What opening a variant card sets in the code lines (the variant itself). */
export const CARD_VARIANT: Partial<Record<ExperimentId, Record<string, unknown>>> = Object.fromEntries(
  VARIANT_CARD_IDS.map((k) => [k, VARIANT_CARDS[k].opts]),
);
