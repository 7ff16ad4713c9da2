// The page's fixed parts: the header with the share buttons, the preset gallery, the exercises and
// the footer.
import { el } from '../ui/dom';
import { PRESETS, presetHash } from './presets';
import { EXERCISES, KIND_LABEL } from '../attention/exercise/catalogue';

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

/** The exercises: each card is a link (a#data-exercise) and an Embed… button (the page opens the
 *  embed dialog with the exercise's link). */
export function exerciseGallery(): HTMLElement {
  return el(
    'section',
    { class: 'gallery exercises', 'data-section': 'exercises', 'aria-labelledby': 'exercises-title' },
    el('h2', { id: 'exercises-title', text: 'Exercises' }),
    el('p', {
      class: 'muted',
      text: 'Each is a link a teacher can share or embed (Embed… under a card). The page checks the student’s answer on the core’s numbers and reports each check to the page that embeds it, such as a course page or an LMS.',
    }),
    el(
      'ul',
      { class: 'cards' },
      ...EXERCISES.map((e) =>
        el(
          'li',
          { class: 'card' },
          el(
            'a',
            { href: `#v=1&ex=${e.id}`, 'data-exercise': e.id, class: 'card-link' },
            el('span', { class: 'card-lesson', text: `${KIND_LABEL[e.kind]} · ${e.id}` }),
            el('strong', { class: 'card-title', text: e.title }),
            el('span', { class: 'card-blurb', text: e.task }),
          ),
          el('button', {
            type: 'button',
            class: 'btn small card-embed',
            'data-embed-exercise': e.id,
            'aria-label': `Embed the exercise “${e.title}”`,
            text: 'Embed…',
          }),
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
