// The Train tab's experiment cards: each is a share link to a preset run (train/presets.ts) and
// says what that run shows. The links are written with the page's link writer once it is known.
import { el } from '../ui/dom';
import { TRAIN_PRESETS } from './presets';
import { trainPresetHash, type HashOf } from './links';

export class ExperimentCards {
  readonly root: HTMLElement;

  constructor() {
    this.root = el(
      'section',
      { class: 'tr-presets', 'aria-labelledby': 'train-presets-title' },
      el('h3', { id: 'train-presets-title', text: 'Experiments' }),
      el(
        'ul',
        { class: 'cards' },
        ...TRAIN_PRESETS.map((p) =>
          el(
            'li',
            { class: 'card' },
            el(
              'a',
              { 'data-train-preset': p.id, 'data-claim': JSON.stringify(p.claim), class: 'card-link' },
              el('span', { class: 'card-lesson', text: 'Train' }),
              el('strong', { class: 'card-title', text: p.title }),
              el('span', { class: 'card-blurb', text: p.blurb }),
              el('span', { class: 'card-figure', text: p.figure }),
            ),
          ),
        ),
      ),
    );
  }

  /** Give the cards that have none their link. */
  link(hashOf: HashOf): void {
    for (const a of this.root.querySelectorAll<HTMLAnchorElement>('a[data-train-preset]:not([href])')) {
      const p = TRAIN_PRESETS.find((x) => x.id === a.dataset.trainPreset);
      if (p) a.href = trainPresetHash(p, hashOf);
    }
  }
}
