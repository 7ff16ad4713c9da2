// The notebook helper's postMessage script (web/public/attention_playground.py, _repr_html_ for
// arrays too large for a link), run here against a stand-in window and frame: it answers only the
// frame's own ready message (right source, type, version and id), posts to the page's origin only,
// and what it posts is read by readArraysMessage into NumPy's float32 bits. Runs /usr/bin/python3.
import { describe, it, expect, beforeAll } from 'vitest';
import { readArraysMessage, readyMessage, ARRAY_MESSAGE_TYPES } from '../../web/src/attention/arrays';

interface ChildProcess {
  execFileSync(cmd: string, args: string[], opts: { encoding: 'utf8'; cwd: string; maxBuffer: number }): string;
}
const cp = (await import(/* @vite-ignore */ 'node:' + 'child_process')) as ChildProcess;
const ROOT = new URL('../../', import.meta.url).pathname;

const PY = `
import json, sys
import numpy as np
sys.path.insert(0, 'web/public')
import attention_playground as ap
rng = np.random.default_rng(5)
w = rng.random((3, 150, 150))
w /= w.sum(axis=-1, keepdims=True)
p = ap.show(w, url='http://127.0.0.1:8765/play/')
small = ap.show(w[0, :4, :4], url='http://127.0.0.1:8765/play/')
print(json.dumps({'html': p._repr_html_(), 'id': p.frame_id, 'inLink': p.in_link, 'url': p.url,
                  'smallHtml': small._repr_html_(), 'f4hex': w.astype('<f4').tobytes().hex()}))
`;

interface Out { html: string; id: string; inLink: boolean; url: string; smallHtml: string; f4hex: string }
let out: Out;
beforeAll(() => {
  out = JSON.parse(cp.execFileSync('/usr/bin/python3', ['-c', PY], { encoding: 'utf8', cwd: ROOT, maxBuffer: 64 << 20 })) as Out;
});

function hex(a: Float32Array): string {
  let s = '';
  const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
}

/** Run the helper's script with a fake window holding one frame; returns the frame's inbox and a
 *  way to dispatch message events to the window. */
function harness(html: string) {
  const script = /<script>([\s\S]*)<\/script>/.exec(html)![1];
  const posted: { data: unknown; target: string }[] = [];
  const frameWindow = { postMessage: (data: unknown, target: string) => posted.push({ data, target }) };
  const listeners: ((e: { source: unknown; data: unknown; origin: string }) => void)[] = [];
  const fakeWindow = { addEventListener: (type: string, f: (typeof listeners)[number]) => type === 'message' && listeners.push(f) };
  const fakeDocument = { getElementById: (id: string) => (html.includes(`id="${id}"`) ? { contentWindow: frameWindow } : null) };
  new Function('window', 'document', script)(fakeWindow, fakeDocument);
  const dispatch = (source: unknown, data: unknown) => listeners.forEach((f) => f({ source, data, origin: 'http://127.0.0.1:8765' }));
  return { posted, frameWindow, dispatch };
}

describe('the helper’s postMessage script', () => {
  it('large arrays are not in the link; the frame is told to wait for them', () => {
    expect(out.inLink).toBe(false);
    expect(out.url).toContain('arrays=post');
    expect(out.url).not.toContain('uw=');
  });
  it('answers only its own frame’s ready message, to the page’s origin', () => {
    const { posted, frameWindow, dispatch } = harness(out.html);
    dispatch({}, readyMessage(out.id)); // another window
    dispatch(frameWindow, readyMessage('ap-other')); // another frame's id
    dispatch(frameWindow, { ...readyMessage(out.id), version: 2 });
    dispatch(frameWindow, { type: 'attention-playground:resize', version: 1, id: out.id });
    dispatch(frameWindow, null);
    expect(posted).toEqual([]);
    dispatch(frameWindow, readyMessage(out.id));
    expect(posted.length).toBe(1);
    expect(posted[0].target).toBe('http://127.0.0.1:8765');
    expect((posted[0].data as { type: string }).type).toBe(ARRAY_MESSAGE_TYPES.arrays);
  });
  it('what it posts decodes to NumPy’s float32 bits', () => {
    const { posted, frameWindow, dispatch } = harness(out.html);
    dispatch(frameWindow, readyMessage(out.id));
    const got = readArraysMessage(posted[0].data, out.id)!;
    expect(got.errors).toEqual([]);
    expect(got.arrays.weights!.shape).toEqual([3, 150, 150]);
    expect(hex(got.arrays.weights!.data as Float32Array)).toBe(out.f4hex);
  });
  it('small arrays: an iframe alone, no script', () => {
    expect(out.smallHtml).not.toContain('<script');
    expect(out.smallHtml).toMatch(/^<iframe id="ap-\d+-[0-9a-f]{8}" src="http:\/\/127\.0\.0\.1:8765\/play\/\?embed=1&amp;id=ap-[^"]+#v=1&amp;uw=1\.f4\.4x4\.[bz]\.[A-Za-z0-9_-]+"/);
  });
});
