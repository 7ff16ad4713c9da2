// "Which variants form induction heads?": the figures the Train tab's card and docs/experiments.md
// state come from web/src/train/induction-variants-data.ts (written by
// scripts/induction-variants.mjs). Here two rows are re-run with their fixed seeds through the wasm
// module and must give those figures again: the step where held-out accuracy first reaches 0.9,
// the end scores and the final accuracy (deterministic: same module, same seeds). Not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';
import { loadTrain } from './train-helpers.mjs';
import { ROWS, runOne, cardData } from '../../scripts/induction-variants.mjs';

function cardFile() {
  const text = fs.readFileSync(path.join(ROOT, 'web', 'src', 'train', 'induction-variants-data.ts'), 'utf8');
  const at = text.indexOf('} =\n');
  assert.ok(at > 0, 'the data file has the generated layout');
  return JSON.parse(text.slice(at + 3).trim().replace(/;$/, ''));
}

test('the card shows the measured result (docs/induction-variants.json) and every row', () => {
  const card = cardFile();
  const full = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'induction-variants.json'), 'utf8'));
  assert.deepEqual(card, cardData(full));
  assert.deepEqual(card.rows.map((r) => r.id), ROWS.map((r) => r.id));
  assert.deepEqual(card.seeds, [0, 1, 2, 3, 4]);
  for (const r of card.rows) assert.equal(r.at90.length, 5, r.id);
});

for (const [id, seed] of [['softmax', 0], ['alibi', 0]]) {
  test(`re-running row ${id}, init seed ${seed}, gives the figures the card states`, async () => {
    const lib = await loadTrain();
    const card = cardFile();
    const row = card.rows.find((r) => r.id === id);
    const i = card.seeds.indexOf(seed);
    const got = runOne(lib, ROWS.find((r) => r.id === id), seed, card.steps);
    assert.equal(got.at90, row.at90[i], 'step where accuracy first reaches 0.9');
    assert.ok(Math.abs(got.prev0 - row.prev0[i]) <= 1e-4, `previous-token ${got.prev0} vs ${row.prev0[i]}`);
    assert.ok(Math.abs(got.ind1 - row.ind1[i]) <= 1e-4, `induction ${got.ind1} vs ${row.ind1[i]}`);
    assert.ok(Math.abs(got.finalAccuracy - row.finalAccuracy[i]) <= 1e-4, 'final accuracy');
  });
}
