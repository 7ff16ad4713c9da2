// Embedding: the `?embed=1` mode (which sections show), the height messages to the host page,
// and the copy-paste iframe snippet with a resize listener that checks origin and source.
import { EXERCISE_MESSAGE } from '../shared/exercise-message';

export const RESIZE_MESSAGE = 'attention-playground:resize';
export const MESSAGE_VERSION = 1;

/** Sections a page can show or hide. */
export const SECTIONS = [
  'title',
  'share',
  'tabs',
  'export',
  'controls',
  'tokens',
  'model',
  'mask',
  'scale',
  'presets',
  'exercises',
  'legend',
  'arrays',
] as const;
export type Section = (typeof SECTIONS)[number];
const CONTROL_GROUPS: Section[] = ['tokens', 'model', 'mask', 'scale'];

export interface EmbedConfig {
  embed: boolean;
  /** Sections that are hidden. */
  hidden: Set<Section>;
  /** An id the host chose, echoed in messages. */
  frameId: string | null;
  /** `fit=1`: lay the view out inside the box the host gives the frame (its height included):
   *  the zoomed heatmap is scaled to the frame, nothing scrolls, no height messages are sent. */
  fit: boolean;
  /** `autosize=0`: send no height messages (the host keeps the frame's height). */
  autosize: boolean;
  /** `maxheight=N` (px, 100–10000): the height messages never ask for more. */
  maxHeight: number | null;
}

/** A height in CSS px from an attribute or link key: a whole number 100–10000 (a trailing "px" is
 *  allowed), else null. Pure. */
export function parseHeight(v: string | null | undefined): number | null {
  const m = /^\s*(\d{1,5})\s*(px)?\s*$/.exec(v ?? '');
  if (!m) return null;
  const n = Number(m[1]);
  return n >= 100 && n <= 10000 ? n : null;
}

/** An on/off switch: "0", "false", "off", "no" are off; anything else (present) is on. Pure. */
export function switchOff(v: string | null | undefined): boolean {
  return v != null && /^\s*(0|false|off|no)\s*$/i.test(v);
}

function list(v: string | null): string[] {
  return (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** Pure: read embed options from a query string. Unknown section names are ignored. */
export function parseEmbed(search: string): EmbedConfig {
  const q = new URLSearchParams(search);
  const embed = q.get('embed') === '1' || q.get('embed') === 'true';
  const valid = (x: string): x is Section => (SECTIONS as readonly string[]).includes(x);
  const show = list(q.get('show')).filter(valid);
  const hide = list(q.get('hide')).filter(valid);
  const hidden = new Set<Section>();
  if (embed) {
    // Compact by default: heatmaps, legend and tabs; controls only when asked for.
    for (const s of ['title', 'share', 'export', 'presets', 'exercises', ...CONTROL_GROUPS] as Section[]) hidden.add(s);
    for (const s of show) {
      hidden.delete(s);
      if (s === 'controls') CONTROL_GROUPS.forEach((g) => hidden.delete(g));
    }
  }
  for (const s of hide) {
    hidden.add(s);
    if (s === 'controls') CONTROL_GROUPS.forEach((g) => hidden.add(g));
  }
  const rawId = q.get('id');
  const frameId = rawId && /^[\w-]{1,64}$/.test(rawId) ? rawId : null;
  const fit = embed && (q.get('fit') === '1' || q.get('fit') === 'true');
  const autosize = !fit && !switchOff(q.get('autosize'));
  return { embed, hidden, frameId, fit, autosize, maxHeight: parseHeight(q.get('maxheight')) };
}

/** An embedded exercise needs its controls: they show unless `hide=` names them. Pure. */
export function showExerciseControls(cfg: EmbedConfig, search: string): void {
  const hide = list(new URLSearchParams(search).get('hide'));
  if (hide.includes('controls')) return;
  for (const s of ['controls', ...CONTROL_GROUPS] as Section[]) if (!hide.includes(s)) cfg.hidden.delete(s);
}

/** `?ex=<id>` (an exercise named in the query, as in `?embed=1&ex=mask-window3`) goes into the
 *  hash's settings unless the hash names one itself. Pure. */
export function exerciseFromQuery(search: string, hash: string): string {
  const ex = new URLSearchParams(search).get('ex');
  if (!ex || /(^#?|&)ex=/.test(hash)) return hash;
  const h = hash.replace(/^#/, '');
  return `#${h === '' ? 'v=1' : h}&ex=${encodeURIComponent(ex)}`;
}

/** Post the document height to the parent whenever it changes (never more than maxHeight: a
 *  taller page scrolls inside its frame). */
export function startResizeMessages(frameId: string | null, maxHeight: number | null = null): void {
  if (window.parent === window) return;
  let last = -1;
  const send = () => {
    const full = Math.ceil(document.documentElement.getBoundingClientRect().height);
    const height = maxHeight ? Math.min(full, maxHeight) : full;
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: RESIZE_MESSAGE, version: MESSAGE_VERSION, height, id: frameId }, '*');
  };
  new ResizeObserver(send).observe(document.documentElement);
  window.addEventListener('load', send);
  send();
}

/** The iframe snippet a course page can paste. Pure. */
export function embedSnippet(pageUrl: string, hash: string, opts: { show?: string; frameId?: string } = {}): string {
  const u = new URL(pageUrl);
  const q = new URLSearchParams({ embed: '1' });
  if (opts.show) q.set('show', opts.show);
  const frameId = opts.frameId ?? 'attention-playground-1';
  q.set('id', frameId);
  u.search = q.toString();
  u.hash = hash;
  const origin = u.origin;
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<iframe id="${esc(frameId)}" src="${esc(u.toString())}" title="Attention Playground" style="width:100%;border:0" height="640" loading="lazy"></iframe>
<script>
addEventListener('message', function (e) {
  var f = document.getElementById(${JSON.stringify(frameId)});
  if (!f || e.origin !== ${JSON.stringify(origin)} || e.source !== f.contentWindow) return;
  var d = e.data;
  if (d && d.type === '${RESIZE_MESSAGE}' && d.version === ${MESSAGE_VERSION} && typeof d.height === 'number') {
    f.style.height = Math.min(Math.max(d.height, 100), 10000) + 'px';
  }
  // An exercise's check, as an event on the frame: f.addEventListener('${EXERCISE_MESSAGE}', …)
  if (d && d.type === '${EXERCISE_MESSAGE}') f.dispatchEvent(new CustomEvent(d.type, { detail: d }));
});
</script>`;
}

/** The same frame for hosts with a strict Content-Security-Policy (no inline script or style):
 *  attributes only, plus the small listener script shipped next to the page
 *  (embed-listener.js), which the host loads by address or copies to its own site. Pure. */
export function cspSnippet(pageUrl: string, hash: string, opts: { show?: string; maxHeight?: number } = {}): string {
  const u = new URL(pageUrl);
  const q = new URLSearchParams({ embed: '1' });
  if (opts.show) q.set('show', opts.show);
  u.search = q.toString();
  u.hash = hash;
  const listener = new URL('embed-listener.js', pageUrl).toString();
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const max = opts.maxHeight ? ` data-maxheight="${opts.maxHeight}"` : '';
  return `<iframe data-attention-playground${max} src="${esc(u.toString())}" title="Attention Playground" width="100%" height="640" frameborder="0" loading="lazy"></iframe>
<script src="${esc(listener)}" defer></script>`;
}
