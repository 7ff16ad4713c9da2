// The heatmap panels after many redraws (the pixel buffers are reused): the zoomed heatmap, the
// Mask view's row sums, the Scale view's entropies and the Output view's colour ranges still
// show exactly the exported numbers. Nothing here is timed, so these run beside other files
// (frames.test.mjs keeps the tests that depend on the page's speed, which run alone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servedBrowser, exportJson } from './helpers.mjs';
import { SMALL, slide, withPage as withPageOn, words } from './frames-helpers.mjs';

const env = servedBrowser();
const withPage = (hash, fn) => withPageOn(env, hash, fn);

// Viridis from its 11 published control points, interpolated in sRGB (written here as the
// test's own oracle of the colours; the page draws weight w of [0, 1] as entry round(255·w)).
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c', '#22a884', '#44bf70', '#7ad151', '#bddf26', '#fde725']
  .map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
function viridis(i) {
  const t = (i / 255) * 10, k = Math.min(Math.floor(t), 9), f = t - k;
  return [0, 1, 2].map((c) => Math.round(VIRIDIS[k][c] + (VIRIDIS[k + 1][c] - VIRIDIS[k][c]) * f));
}

test('after many redraws (reused pixel buffers) the zoomed heatmap shows exactly the exported weights', async () => {
  await withPage(SMALL, async (page) => {
    for (const v of [2, 7, 3, 9, 5]) await slide(page, v);
    const data = await exportJson(page);
    const pixels = await page.evaluate(() => {
      const c = document.querySelector('.zoom-panel .hm-frame canvas');
      return { w: c.width, h: c.height, rgba: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data) };
    });
    const W = data.heads[0].weights;
    const T = W.length;
    assert.equal(pixels.w, T);
    assert.equal(pixels.h, T);
    let masked = 0;
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        const forbidden = j > i || i - j >= data.state.win;
        const expect = forbidden && W[i][j] === 0 ? [232, 228, 220] : viridis(Math.round(W[i][j] * 255));
        const o = (i * T + j) * 4;
        assert.deepEqual(pixels.rgba.slice(o, o + 4), [...expect, 255], `cell (${i}, ${j}) weight ${W[i][j]}`);
        if (forbidden) masked++;
      }
    }
    assert.ok(masked > 0);
  });
});

test('Mask view: after redraws the row sums stay one per weight row, aligned with it, and read 1.000', async () => {
  await withPage(`${SMALL}&view=mask`, async (page) => {
    for (const v of [2, 6, 4]) await slide(page, v);
    const m = await page.evaluate(() => {
      const frame = document.querySelectorAll('.view-mask .mask-panel .hm-frame')[2];
      const fr = frame.getBoundingClientRect();
      const sums = [...document.querySelectorAll('.view-mask .row-sums .sum')].map((s) => ({ top: s.getBoundingClientRect().top, h: s.getBoundingClientRect().height, text: s.textContent }));
      return { top: fr.top, h: fr.height, sums };
    });
    assert.equal(m.sums.length, 24);
    const row = m.h / 24;
    m.sums.forEach((s, i) => {
      assert.ok(Math.abs(s.h - row) < 0.5, `row ${i}: sum ${s.h.toFixed(2)} px high, rows ${row.toFixed(2)} px`);
      assert.ok(Math.abs(s.top - (m.top + i * row)) < 1, `row ${i}: sum at ${s.top.toFixed(1)}, row at ${(m.top + i * row).toFixed(1)}`);
      assert.ok(s.text === '' || s.text === '1.000', `row ${i} sum reads "${s.text}"`);
    });
    assert.ok(m.sums.filter((s) => s.text === '1.000').length >= 12);
  });
});

test('Scale view: after redraws the live rows and the mean match the entropy of the exported weights', async () => {
  // T = 80: 64 rows are listed, then "… 16 more rows"; the mean is over all 80.
  await withPage(`#v=1&src=random&tokens=${words(80)}&heads=2&kv=2&dm=32&dk=16&seed=3&init=scaled&view=scale`, async (page) => {
    for (const v of [3, 9, 5]) await slide(page, v);
    const data = await exportJson(page);
    const W = data.heads[0].weights;
    const ent = W.map((row) => -row.reduce((a, w) => a + (w > 0 ? w * Math.log(w) : 0), 0));
    const win = data.state.win;
    const ui = await page.evaluate(() => ({
      rows: [...document.querySelectorAll('.entropy-bars li:not(.muted)')].map((li) => li.querySelector('.ent-val').textContent),
      more: document.querySelector('.entropy-bars li.muted')?.textContent ?? null,
      mean: document.querySelector('.ent-mean').textContent,
    }));
    assert.equal(ui.rows.length, 64);
    assert.equal(ui.more, '… 16 more rows');
    ui.rows.forEach((text, i) => {
      const [e, c] = text.split(' / ').map(Number);
      assert.ok(Math.abs(e - ent[i]) <= 0.006, `row ${i}: entropy ${e} shown, ${ent[i].toFixed(4)} from the weights`);
      assert.ok(Math.abs(c - Math.log(Math.min(i + 1, win))) <= 0.006, `row ${i}: ceiling ${c}`);
    });
    const mean = ent.reduce((a, b) => a + b, 0) / ent.length;
    const m = ui.mean.match(/mean entropy ([\d.]+) nats over (\d+) rows/);
    assert.ok(m, ui.mean);
    assert.equal(Number(m[2]), 80);
    assert.ok(Math.abs(Number(m[1]) - mean) <= 0.0006, `mean ${m[1]} vs ${mean.toFixed(4)}`);
  });
});

test('Output view: the heads (and their concatenation) and the output each span their own colour range', async () => {
  // N(0, 1) weights with d_model 64: the output after W_o is far larger than the heads' values.
  await withPage(`${SMALL}&view=output`, async (page) => {
    const data = await exportJson(page);
    const heads = data.heads.map((h) => h.output.flat());
    const out = data.output.flat();
    const absMax = (xs) => xs.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const mh = absMax(heads.flat()), mo = absMax(out);
    assert.ok(mo > 2 * mh, `output range ${mo} vs heads ${mh}: the case needs the output larger`);
    // The colour of a cell as drawn: entry round((v − lo) / (hi − lo) · 255) of viridis.
    const colourOf = (v, m) => viridis(Math.round(((v + m) / (2 * m)) * 255));
    const canvases = await page.evaluate(() => [...document.querySelectorAll('.view-output .hm-frame canvas.hm-data')].map((c) => ({
      w: c.width, h: c.height, rgba: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data) })));
    assert.equal(canvases.length, heads.length + 2);
    const check = (cv, values, m, what) => {
      assert.equal(cv.w * cv.h, values.length, `${what} size`);
      values.forEach((v, k) => assert.deepEqual(cv.rgba.slice(4 * k, 4 * k + 3), colourOf(v, m), `${what} cell ${k} value ${v}`));
    };
    heads.forEach((vals, h) => check(canvases[h], vals, mh, `head ${h + 1}`));
    check(canvases[heads.length], data.merged.flat(), mh, 'merged');
    check(canvases[heads.length + 1], out, mo, 'output');
    // the largest head value reaches an end of the scale
    const k = heads[0].findIndex((v) => Math.abs(v) === absMax(heads[0]));
    assert.ok(absMax(heads[0]) < mh || [0, 255].includes(Math.round(((heads[0][k] + mh) / (2 * mh)) * 255)));
  });
});
