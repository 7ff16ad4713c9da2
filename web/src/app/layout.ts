// The page's fixed parts: the header with the share buttons, the preset gallery and the footer.
import { el } from '../ui/dom';
import { PRESETS, presetHash } from './presets';

export function pageHeader(copyLink: HTMLElement, copyEmbed: HTMLElement, status: HTMLElement): HTMLElement {
  return el(
    'header',
    { class: 'top' },
    el(
      'div',
      { class: 'brand', 'data-section': 'title' },
      el('h1', {}, el('span', { class: 'logo', 'aria-hidden': 'true' }), 'Attention Playground'),
      el('p', {
        class: 'formula',
        text: 'softmax(Q Kᵀ · scale + mask) · V, one row per query — computed in WebAssembly',
      }),
    ),
    el('div', { class: 'share', 'data-section': 'share' }, copyLink, copyEmbed, status),
    startHere(),
  );
}

/** One line for a newcomer: what the default view is, and where the other examples are. */
function startHere(): HTMLElement {
  // A button, not an href="#…": the page's state lives in the hash.
  const toGallery = el('button', {
    type: 'button',
    class: 'linklike',
    'data-testid': 'start-gallery',
    text: 'the gallery of presets below',
  });
  toGallery.addEventListener('click', () => {
    const g = document.getElementById('gallery-title');
    g?.scrollIntoView({ block: 'start' });
    g?.setAttribute('tabindex', '-1');
    g?.focus({ preventScroll: true });
  });
  return el(
    'p',
    { class: 'page-start', 'data-section': 'title', 'data-testid': 'start-here' },
    el('strong', { text: 'Start here: ' }),
    el('span', {
      class: 'long',
      text: 'the page opens on lesson 1’s toy sentence with two hand-built heads. Read row 8, the second “cat”: head 1 looks at both “cat”s, head 2 at the word before it. The lessons’ other examples are in ',
    }),
    el('span', { class: 'short', text: 'lesson 1’s toy sentence; read row 8 (the second “cat”). More in ' }),
    toGallery,
    '.',
  );
}

/** The gallery: each card is a share link (a#data-preset) to a lesson's figure. */
export function presetGallery(): HTMLElement {
  return el(
    'section',
    { class: 'gallery', 'data-section': 'presets', 'aria-labelledby': 'gallery-title' },
    el('h2', { id: 'gallery-title', text: 'Presets from the lessons' }),
    el('p', {
      class: 'muted',
      text: 'Each card is a share link. Open one, then read the figure the lesson describes.',
    }),
    el(
      'ul',
      { class: 'cards' },
      ...PRESETS.map((p) =>
        el(
          'li',
          { class: 'card' },
          el(
            'a',
            { href: presetHash(p), 'data-preset': p.id, class: 'card-link' },
            el('span', { class: 'card-lesson', text: p.lesson }),
            el('strong', { class: 'card-title', text: p.title }),
            el('span', { class: 'card-blurb', text: p.blurb }),
            el('span', { class: 'card-figure', text: p.figure }),
          ),
        ),
      ),
    ),
  );
}

export function pageFooter(): HTMLElement {
  return el(
    'footer',
    { class: 'foot', 'data-section': 'title' },
    el('span', {
      text: 'Colour map: viridis (matplotlib, van der Walt & Smith), perceptually uniform and colour-blind safe. Positions count from 0; layers and heads from 1, as in the lessons.',
    }),
  );
}
