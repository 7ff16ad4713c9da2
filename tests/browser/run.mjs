// Runs the browser test files: the files that time nothing three at a time (each drives its own
// Chromium, which leaves a core idle much of the time), then the files whose assertions depend on
// how fast the page runs (a fitted exponent, what is computed on the page or in the Worker, how
// often a drag rewrites the link) one at a time, on a machine with nothing else to do.
//
//   node tests/browser/run.mjs [FILE...]   (no FILE: every tests/browser/*.test.mjs)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const TIMED = new Set(['frames.test.mjs', 'timing.test.mjs', 'train.test.mjs']);
// The longest files start first (measured, docs/testing.md), so the two lanes end together
// instead of one finishing a long file alone; the rest follow in name order.
const LONGEST = ['train-defects', 'lesson', 'hosts', 'defects', 'decode', 'decode-state'].map((f) => `${f}.test.mjs`);
const rank = (f) => (LONGEST.includes(f) ? LONGEST.indexOf(f) : LONGEST.length);

const given = process.argv.slice(2);
const files = (given.length ? given.map((f) => basename(f)) : readdirSync(DIR).filter((f) => f.endsWith('.test.mjs'))).sort();
const shared = files.filter((f) => !TIMED.has(f)).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const alone = files.filter((f) => TIMED.has(f));

let failed = false;
// Three at a time: a page often waits (a load, a Worker's message), so a third file fills the
// cores (the untimed files 430 → 411 s on 2 cores; AP_BROWSER_LANES sets another count).
const lanes = Number(process.env.AP_BROWSER_LANES || 3);
for (const [group, concurrency] of [[shared, lanes], [alone, 1]]) {
  if (!group.length) continue;
  console.log(`\n# ${group.length} file(s), ${concurrency} at a time: ${group.join(' ')}`);
  const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...group.map((f) => join(DIR, f))], { stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
