// <attention-playground preset="induction" show="tokens,mask" view="mask"></attention-playground>
// A small custom element for course sites: it creates a sandboxed iframe of the playground in
// embed mode next to this script, and sizes it from the page's resize messages (origin and source
// checked). Attributes: preset (a gallery id), hash (a full share-link hash, wins over preset),
// exercise (an exercise id, docs/exercises.md: each check is dispatched on the element as an
// `attention-playground:exercise` event), view, show, hide; and its size:
//   height="480"     a fixed height, honoured (the frame never resizes itself)
//   maxheight="700"  auto-height, but never taller (a taller view scrolls inside the frame)
//   autosize="off"   no auto-height (the frame stays at height, default 640)
//   fit              lay the view out inside the box (height, default 640): the zoomed heatmap is
//                    scaled to it and nothing scrolls: for slides
// No inline style: the shadow root's rules come from a constructed stylesheet and the frame's
// size is set through the CSSOM, both allowed by a strict Content-Security-Policy (a <style>
// element in the shadow root is not).
import { findPreset, presetState } from './presets';
import { encodeState, decodeHash } from './state';
import type { State } from './state';
import { RESIZE_MESSAGE, MESSAGE_VERSION, parseHeight, switchOff } from '../embed/embed';
import { EXERCISE_MESSAGE, isExerciseMessage } from '../shared/exercise-message';

const PAGE = new URL(/* @vite-ignore */ './index.html', import.meta.url);

let sheet: CSSStyleSheet | null = null;
function hostSheet(): CSSStyleSheet {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(':host{display:block}@media print{:host{break-inside:avoid}}');
  }
  return sheet;
}

class AttentionPlayground extends HTMLElement {
  static get observedAttributes() {
    return ['preset', 'hash', 'exercise', 'view', 'show', 'hide', 'height', 'maxheight', 'autosize', 'fit'];
  }
  private frame: HTMLIFrameElement | null = null;
  private onMessage = (e: MessageEvent) => {
    if (!this.frame || e.origin !== PAGE.origin || e.source !== this.frame.contentWindow) return;
    const d = e.data as { type?: unknown; version?: unknown; height?: unknown };
    if (isExerciseMessage(d)) {
      this.dispatchEvent(new CustomEvent(EXERCISE_MESSAGE, { detail: d, bubbles: true, composed: true }));
      return;
    }
    if (
      d &&
      d.type === RESIZE_MESSAGE &&
      d.version === MESSAGE_VERSION &&
      typeof d.height === 'number' &&
      Number.isFinite(d.height)
    ) {
      if (!this.autosizes()) return;
      const max = parseHeight(this.getAttribute('maxheight')) ?? 10000;
      this.frame.style.height = `${Math.min(Math.max(d.height, 100), max)}px`;
    }
  };

  private fits(): boolean {
    return this.hasAttribute('fit') && !switchOff(this.getAttribute('fit'));
  }

  /** Auto-height unless a height is given, autosize is off, or the view fits a fixed box. */
  private autosizes(): boolean {
    return (
      !this.fits() && parseHeight(this.getAttribute('height')) === null && !switchOff(this.getAttribute('autosize'))
    );
  }

  connectedCallback() {
    window.addEventListener('message', this.onMessage);
    this.render();
  }
  disconnectedCallback() {
    window.removeEventListener('message', this.onMessage);
  }
  attributeChangedCallback() {
    if (this.isConnected) this.render();
  }

  private render() {
    const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
    const preset = findPreset(this.getAttribute('preset') ?? '');
    let state = preset ? presetState(preset) : decodeHash('').state;
    const hash = this.getAttribute('hash');
    if (hash) state = decodeHash(hash).state;
    const exercise = this.getAttribute('exercise');
    // Over the preset's settings, the exercise's start sets the rest (app/state.ts).
    if (exercise && !hash) state = decodeHash(`${encodeState(state)}&ex=${encodeURIComponent(exercise)}`).state;
    const view = this.getAttribute('view');
    if (view)
      state = decodeHash(encodeState({ ...state, page: { ...state.page, view: view as State['page']['view'] } })).state;
    const url = new URL(PAGE);
    const q = new URLSearchParams({ embed: '1' });
    for (const k of ['show', 'hide'] as const) {
      const v = this.getAttribute(k);
      if (v) q.set(k, v);
    }
    if (this.fits()) q.set('fit', '1');
    else if (!this.autosizes()) q.set('autosize', '0');
    const max = parseHeight(this.getAttribute('maxheight'));
    if (max !== null && this.autosizes()) q.set('maxheight', String(max));
    url.search = q.toString();
    url.hash = encodeState(state);
    if (!this.frame) {
      this.frame = document.createElement('iframe');
      this.frame.title = this.getAttribute('title') ?? 'Attention Playground';
      this.frame.loading = 'lazy';
      this.frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-downloads allow-popups');
      this.frame.style.display = 'block';
      this.frame.style.width = '100%';
      this.frame.style.border = '0';
      root.adoptedStyleSheets = [hostSheet()];
      root.append(this.frame);
      this.frame.style.height = `${parseHeight(this.getAttribute('height')) ?? 640}px`;
    }
    // A height given (or changed) is honoured; an auto-sized frame keeps what it last measured.
    const fixed = parseHeight(this.getAttribute('height'));
    if (fixed !== null) this.frame.style.height = `${fixed}px`;
    if (this.frame.src !== url.toString()) this.frame.src = url.toString();
  }
}

if (!customElements.get('attention-playground')) customElements.define('attention-playground', AttentionPlayground);
