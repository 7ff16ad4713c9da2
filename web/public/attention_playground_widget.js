// The playground as an anywidget-protocol module (JupyterLab, Colab, VS Code, marimo, MyST):
//
//   export default { render({ model, el }) }
//
// It draws the playground in an iframe inside `el`, from the model's traits (all optional
// except one group of arrays):
//   weights | q, k, v, mask | x, wq, wk, wv   array link values (docs/arrays.md: "1.f4.6x6.b.…"),
//                                             as attention_playground.encode_array() writes them
//   tokens   list of strings (one per key)   options  object of link keys, e.g. { causal: 1, fill: 'finite' }
//   view     'heads' | 'mask' | 'scale' | 'output'     height  pixels (default 640)
//   exercise an exercise id (docs/exercises.md); each check the student makes is written back to
//            the `exercise_result` trait ({ id, passed, score, attempts, state }) and saved
//   url      the playground's address (default: the folder this module is served from; needed when
//            the host imports the module from its text, as anywidget does with an inline _esm)
// Arrays that fit go in the frame's link; larger ones are sent by postMessage after the frame's
// "ready" message (accepted only from that frame's window: event.source). Plain JavaScript with
// no imports, so any host can load it as it is.
const KEYS = { weights: 'uw', q: 'uq', k: 'uk', v: 'uv', mask: 'um', x: 'ux', wq: 'uwq', wk: 'uwk', wv: 'uwv' };
const LINK_MAX = 96 * 1024;
const READY = 'attention-playground:arrays-ready';
const ARRAYS = 'attention-playground:arrays';
const EXERCISE = 'attention-playground:exercise';
let ids = 0;

/** The playground's address: the `url` trait, else the folder this module was served from. Null
 *  when there is neither: a module imported from its text (anywidget does this with an inline
 *  `_esm`, from a blob: URL) has no folder. */
function pageUrl(model) {
  const u = model.get('url');
  if (typeof u === 'string' && u !== '') return u;
  if (!/^(https?|file):/.test(import.meta.url)) return null;
  return new URL('./', import.meta.url).href;
}

const NO_URL = 'Attention Playground: set the widget’s url trait to the playground’s address (a hosted copy, or the one ap.serve() starts). This module was loaded from its text, not from the playground’s folder, so it cannot find the playground by itself.';

/** The frame's address and, when the arrays are too long for it, the message to send. */
export function frameSource(model, id) {
  const hash = ['v=1'];
  const tokens = model.get('tokens');
  if (Array.isArray(tokens) && tokens.length > 0) hash.push('tokens=' + tokens.map((t) => encodeURIComponent(String(t))).join('+'));
  const options = model.get('options');
  if (options && typeof options === 'object')
    for (const [k, v] of Object.entries(options)) if (v !== null && v !== undefined) hash.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  const view = model.get('view');
  if (typeof view === 'string' && view !== '') hash.push('view=' + encodeURIComponent(view));
  const exercise = model.get('exercise');
  if (typeof exercise === 'string' && exercise !== '') hash.push('ex=' + encodeURIComponent(exercise));
  const arrays = {};
  let chars = 0;
  for (const [trait, key] of Object.entries(KEYS)) {
    const v = model.get(trait);
    if (typeof v === 'string' && v !== '') {
      arrays[key] = v;
      chars += v.length + key.length + 2;
    }
  }
  const base = pageUrl(model);
  if (base === null) return { src: null, message: null };
  const u = new URL(base);
  u.searchParams.set('embed', '1');
  u.searchParams.set('id', id);
  let message = null;
  if (chars <= LINK_MAX) for (const [k, v] of Object.entries(arrays)) hash.push(`${k}=${v}`);
  else {
    u.searchParams.set('arrays', 'post');
    message = { type: ARRAYS, version: 1, id, arrays };
  }
  u.hash = hash.join('&');
  return { src: u.href, message };
}

function render({ model, el }) {
  const id = `ap-widget-${++ids}`;
  const frame = document.createElement('iframe');
  frame.title = 'Attention Playground';
  frame.style.border = '0';
  frame.style.width = '100%';
  frame.style.maxWidth = '100%';
  const note = document.createElement('p');
  note.setAttribute('data-attention-playground-error', '');
  note.textContent = NO_URL;
  let message = null;
  const draw = () => {
    const s = frameSource(model, id);
    message = s.message;
    if (s.src === null) {
      frame.remove();
      if (!note.isConnected) el.append(note);
      return;
    }
    note.remove();
    if (!frame.isConnected) el.append(frame);
    const h = Number(model.get('height'));
    frame.style.height = `${Number.isFinite(h) && h > 0 ? h : 640}px`;
    if (frame.src !== s.src) frame.src = s.src;
  };
  const onMessage = (e) => {
    if (e.source !== frame.contentWindow) return;
    const d = e.data;
    if (d && d.type === EXERCISE && d.version === 1 && typeof d.id === 'string' && typeof d.passed === 'boolean') {
      const { id: ex, passed, score, attempts, state } = d;
      model.set('exercise_result', { id: ex, passed, score, attempts, state });
      model.save_changes();
      return;
    }
    if (message && d && d.type === READY && d.version === 1 && d.id === id) {
      const origin = new URL(frame.src).origin;
      frame.contentWindow.postMessage(message, origin === 'null' || !/^https?:/.test(origin) ? '*' : origin);
    }
  };
  window.addEventListener('message', onMessage);
  const traits = ['weights', 'q', 'k', 'v', 'mask', 'x', 'wq', 'wk', 'wv', 'tokens', 'options', 'view', 'exercise', 'height', 'url'];
  for (const t of traits) model.on(`change:${t}`, draw);
  draw();
  return () => {
    window.removeEventListener('message', onMessage);
    for (const t of traits) model.off(`change:${t}`, draw);
    frame.remove();
    note.remove();
  };
}

export default { render };
