// Links keep their meaning: every v1 link in README.md, docs/ and the browser tests, and every
// preset link as the presets wrote it before the state became a table, still opens the same view.
// The reference (tests/web/fixtures/v1-links.json) was recorded with the v1 codec as it stood
// before the table (commit 289be8f): per link, the decoded state by link key and its notices.
// Also: the table itself (unique keys, valid defaults) and the migration step.
import { describe, it, expect } from 'vitest';
import { migrate, CODEC_VERSION, MIGRATIONS, type Migration } from '../../web/src/state/codec';
import { decodeHash, encodeState, defaultState, linkFields, normalizeState, rows, TABLE } from '../../web/src/app/state';
import { PRESETS, presetHash, presetState } from '../../web/src/app/presets';
import fixtureText from './fixtures/v1-links.json?raw';
import readme from '../../README.md?raw';

interface Recorded {
  from: string;
  hash: string;
  state: Record<string, unknown>;
  notices: string[];
}
const recorded: Recorded[] = JSON.parse(fixtureText);
const docs = import.meta.glob('../../docs/*.md', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;

/** `#v=1…` links written in a text (template literals with ${…} are left out). */
function linksIn(text: string): string[] {
  return [...text.matchAll(/#v=1[^\s)"'`<]*/g)].map((m) => m[0]).filter((h) => !h.includes('${'));
}

describe('v1 links still open the same view', () => {
  it('the recorded set covers README, docs, browser tests and presets', () => {
    const from = new Set(recorded.map((r) => r.from.split(' ')[0]));
    expect([...from].sort()).toEqual(expect.arrayContaining(['README.md', 'preset', 'tests/browser/hostile-links.test.mjs']));
    expect(recorded.length).toBeGreaterThan(30);
  });

  for (const r of recorded) {
    it(`${r.from}: ${r.hash.slice(0, 70)}`, () => {
      const d = decodeHash(r.hash);
      const now = linkFields(d.state);
      // Every field the v1 page had means the same; fields added since are at their defaults.
      for (const [k, v] of Object.entries(r.state)) expect(now[k], k).toEqual(v);
      const defaults = linkFields(defaultState());
      for (const k of Object.keys(now)) if (!(k in r.state)) expect(now[k], `new field ${k}`).toEqual(defaults[k]);
      // A clean link stays clean; a corrected one is still corrected.
      expect(d.notices.length === 0, d.notices.join(' | ')).toBe(r.notices.length === 0);
    });
  }

  it('every link in README.md and docs/ is recorded, or is new and clean', () => {
    const known = new Map(recorded.map((r) => [r.hash, r]));
    const texts = [readme, ...Object.values(docs)];
    const links = texts.flatMap(linksIn);
    expect(links.length).toBeGreaterThan(0);
    for (const h of links) if (!known.has(h)) expect(decodeHash(h).notices, h).toEqual([]);
  });

  it('every preset link opens the preset', () => {
    for (const p of PRESETS) expect(decodeHash(presetHash(p))).toEqual({ state: presetState(p), notices: [] });
  });
});

describe('the state table', () => {
  it('link keys (and aliases) are unique across every sub-state', () => {
    const keys = rows().flatMap(([, , f]) => [f.key, ...(f.kind.aliases ?? [])]);
    expect(keys).not.toContain('v');
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('the defaults are valid and encode to the bare version', () => {
    expect(normalizeState(defaultState())).toEqual({ state: defaultState(), notices: [] });
    expect(encodeState(defaultState())).toBe(`#v=${CODEC_VERSION}`);
  });

  it('each row reads back what it writes, alone', () => {
    for (const [g, name, f] of rows()) {
      // Broken percent-encoding under the row's key is reported, and what the row made of it round-trips.
      const d = decodeHash(`#v=1&${f.key}=%ZZ`);
      expect(d.notices.length, `${g}.${name}`).toBeGreaterThan(0);
      expect(decodeHash(encodeState(d.state)), `${g}.${name}`).toEqual({ state: d.state, notices: [] });
    }
  });

  it('sub-states are the keys of TABLE, in order model, page, timing', () => {
    expect(Object.keys(TABLE).slice(0, 3)).toEqual(['model', 'page', 'timing']);
    expect(Object.keys(defaultState())).toEqual(Object.keys(TABLE));
  });
});

describe('migrate(fromVersion)', () => {
  // A made-up v2 that renamed `sharp` to `sharpness`, to exercise the mechanism (v1 is current).
  const steps: Record<number, Migration> = {
    1: (fields) => {
      const v = fields.get('sharp');
      fields.delete('sharp');
      if (v !== undefined) fields.set('sharpness', v);
    },
  };

  it('runs each step from the link version up to the current one', () => {
    const fields = new Map([['sharp', '3'], ['seed', '1']]);
    const notices: string[] = [];
    expect(migrate(fields, 1, notices, steps, 2)).toBe(true);
    expect([...fields]).toEqual([['seed', '1'], ['sharpness', '3']]);
    expect(notices).toEqual([]);
  });

  it('a missing step refuses the link with a notice', () => {
    const notices: string[] = [];
    expect(migrate(new Map(), 1, notices, {}, 3)).toBe(false);
    expect(notices[0]).toMatch(/version 1/);
  });

  it('a current link needs no step; a newer one shows the defaults with a notice', () => {
    expect(Object.keys(MIGRATIONS)).toEqual([]); // v1 is current: nothing to migrate yet
    expect(migrate(new Map([['seed', '1']]), CODEC_VERSION, [])).toBe(true);
    const d = decodeHash(`#v=${CODEC_VERSION + 1}&seed=3`);
    expect(d.state).toEqual(defaultState());
    expect(d.notices[0]).toMatch(/does not know/);
  });
});
