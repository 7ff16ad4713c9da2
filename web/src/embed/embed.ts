// Embedding: the `?embed=1` mode (which sections show), the height messages to the host page,
// and the copy-paste iframe snippet with a resize listener that checks origin and source.
export const RESIZE_MESSAGE = 'attention-playground:resize';
export const MESSAGE_VERSION = 1;

/** Sections a page can show or hide. */
export const SECTIONS = ['title', 'share', 'tabs', 'export', 'controls', 'tokens', 'model', 'mask', 'scale', 'presets', 'legend', 'arrays'] as const;
export type Section = (typeof SECTIONS)[number];
const CONTROL_GROUPS: Section[] = ['tokens', 'model', 'mask', 'scale'];

export interface EmbedConfig {
  embed: boolean;
  /** Sections that are hidden. */
  hidden: Set<Section>;
  /** An id the host chose, echoed in messages. */
  frameId: string | null;
}

function list(v: string | null): string[] {
  return (v ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
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
    for (const s of ['title', 'share', 'export', 'presets', ...CONTROL_GROUPS] as Section[]) hidden.add(s);
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
  return { embed, hidden, frameId };
}

/** Post the document height to the parent whenever it changes. */
export function startResizeMessages(frameId: string | null): void {
  if (window.parent === window) return;
  let last = -1;
  const send = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
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
});
</script>`;
}
