// The page's half of the postMessage protocol for arrays too large for a link (docs/arrays.md):
// the notebook helper's script answers the frame's "ready" with the arrays.
import { arraysMode, NO_ARRAYS, ROLES, type ArraysState } from './state';
import {
  ARRAY_LINK_KEYS,
  READY_INTERVAL_MS,
  READY_TRIES,
  readArraysMessage,
  readyMessage,
  receivedMessage,
} from './index';

/**
 * Arrays too large for a link, sent by the page that embeds this one (the notebook helper's
 * script; docs/arrays.md, "postMessage protocol"): say "ready" to the parent until they arrive,
 * accept them only from the parent window (event.source: a file:// notebook's origin is "null"),
 * and answer whether they could be read.
 */
export function receiveArrays(id: string | null, apply: (arrays: ArraysState) => void): void {
  const parent = window.parent;
  if (parent === window) return;
  let tries = 0;
  let done = false;
  const ready = () => {
    if (done || tries++ >= READY_TRIES) return clearInterval(timer);
    parent.postMessage(readyMessage(id), '*'); // carries no data
  };
  const timer = window.setInterval(ready, READY_INTERVAL_MS);
  ready();
  window.addEventListener('message', (e) => {
    if (e.source !== parent) return;
    const m = readArraysMessage(e.data, id);
    if (!m) return;
    done = true;
    clearInterval(timer);
    const raw = (e.data as { arrays: Record<string, unknown> }).arrays;
    if (m.errors.length === 0) {
      const arrays = { ...NO_ARRAYS, step: 0 };
      for (const r of ROLES) if (m.arrays[r]) arrays[r] = raw[ARRAY_LINK_KEYS[r]] as string;
      if (arraysMode(arrays) === 'none')
        m.errors.push('the message holds no complete set: W, or Q, K and V, or X, W_q, W_k and W_v');
      else apply(arrays);
    }
    parent.postMessage(receivedMessage(id, m.errors), e.origin && e.origin !== 'null' ? e.origin : '*');
  });
}
