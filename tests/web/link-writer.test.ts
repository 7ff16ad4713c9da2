// The link writer (app/link-writer.ts) with fake timers: a single change is written at once; a
// drag (changes closer than the quiet time) is written once, after the pause; a flush (pagehide)
// writes a waiting link at once; the default state leaves an empty hash alone.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLinkWriter, URL_QUIET_MS } from '../../web/src/app/link-writer';

function setup() {
  let hash = '';
  let value = '#v=1&seed=1';
  const writes: string[] = [];
  const events: string[] = [];
  const w = createLinkWriter({
    encode: () => value,
    current: () => hash,
    replace: (h) => {
      writes.push(h);
      hash = h;
    },
    onPending: () => events.push('pending'),
    onFlushed: () => events.push('flushed'),
    now: () => Date.now(),
  });
  return { w, writes, events, set: (v: string) => (value = v), hash: () => hash };
}

describe('link writer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  it('writes a single change at once', () => {
    const { w, writes, events } = setup();
    w.changed();
    expect(writes).toEqual(['#v=1&seed=1']);
    expect(w.pending).toBe(false);
    expect(events).toEqual([]);
  });

  it('during a drag writes once, after the changes pause', () => {
    const { w, writes, events, set } = setup();
    w.changed(); // the first change of the drag: written at once
    for (let i = 2; i <= 10; i++) {
      vi.advanceTimersByTime(16);
      set(`#v=1&seed=${i}`);
      w.changed();
      expect(w.pending).toBe(true);
    }
    expect(writes).toEqual(['#v=1&seed=1']);
    vi.advanceTimersByTime(URL_QUIET_MS - 1);
    expect(writes).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(['#v=1&seed=1', '#v=1&seed=10']);
    expect(w.pending).toBe(false);
    expect(events.filter((e) => e === 'flushed')).toHaveLength(1);
    expect(events[0]).toBe('pending');
  });

  it('a flush (pagehide) mid-drag writes the last state at once, and the timer writes nothing more', () => {
    const { w, writes, set } = setup();
    w.changed();
    vi.advanceTimersByTime(10);
    set('#v=1&seed=7');
    w.changed();
    w.flush();
    expect(writes).toEqual(['#v=1&seed=1', '#v=1&seed=7']);
    expect(w.pending).toBe(false);
    vi.advanceTimersByTime(URL_QUIET_MS * 2);
    expect(writes).toHaveLength(2);
  });

  it('a change after the quiet time is written at once again', () => {
    const { w, writes, set } = setup();
    w.changed();
    vi.advanceTimersByTime(URL_QUIET_MS);
    set('#v=1&seed=2');
    w.changed();
    expect(writes).toEqual(['#v=1&seed=1', '#v=1&seed=2']);
  });

  it('leaves the address alone when it already holds the link, and keeps an empty hash for the defaults', () => {
    const { w, writes, set } = setup();
    set('#v=1');
    w.changed();
    expect(writes).toEqual([]);
    set('#v=1&seed=3');
    vi.advanceTimersByTime(URL_QUIET_MS);
    w.changed();
    w.flush();
    expect(writes).toEqual(['#v=1&seed=3']);
  });
});
