// <attention-playground preset="induction" show="tokens,mask" view="mask"></attention-playground>
// A small custom element for course sites: it creates a sandboxed iframe of the playground in
// embed mode next to this script, and sizes it from the page's resize messages (origin and source
// checked). Attributes: preset (a gallery id), hash (a full share-link hash, wins over preset),
// view, show, hide, height (initial px).
import { findPreset, presetState } from './presets';
import { encodeState, decodeHash } from './state';
import type { State } from './state';
import { RESIZE_MESSAGE, MESSAGE_VERSION } from '../embed/embed';

const PAGE = new URL(/* @vite-ignore */ './index.html', import.meta.url);

class AttentionPlayground extends HTMLElement {
  static get observedAttributes() {
    return ['preset', 'hash', 'view', 'show', 'hide'];
  }
  private frame: HTMLIFrameElement | null = null;
  private onMessage = (e: MessageEvent) => {
    if (!this.frame || e.origin !== PAGE.origin || e.source !== this.frame.contentWindow) return;
    const d = e.data as { type?: unknown; version?: unknown; height?: unknown };
    if (d && d.type === RESIZE_MESSAGE && d.version === MESSAGE_VERSION && typeof d.height === 'number' && Number.isFinite(d.height)) {
      this.frame.style.height = `${Math.min(Math.max(d.height, 100), 10000)}px`;
    }
  };

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
    const view = this.getAttribute('view');
    if (view) state = decodeHash(encodeState({ ...state, page: { ...state.page, view: view as State['page']['view'] } })).state;
    const url = new URL(PAGE);
    const q = new URLSearchParams({ embed: '1' });
    for (const k of ['show', 'hide'] as const) {
      const v = this.getAttribute(k);
      if (v) q.set(k, v);
    }
    url.search = q.toString();
    url.hash = encodeState(state);
    if (!this.frame) {
      this.frame = document.createElement('iframe');
      this.frame.title = this.getAttribute('title') ?? 'Attention Playground';
      this.frame.loading = 'lazy';
      this.frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-downloads allow-popups');
      this.frame.style.cssText = 'display:block;width:100%;border:0;';
      this.frame.style.height = `${Number(this.getAttribute('height')) || 640}px`;
      const style = document.createElement('style');
      style.textContent = ':host{display:block}';
      root.append(style, this.frame);
    }
    if (this.frame.src !== url.toString()) this.frame.src = url.toString();
  }
}

if (!customElements.get('attention-playground')) customElements.define('attention-playground', AttentionPlayground);
