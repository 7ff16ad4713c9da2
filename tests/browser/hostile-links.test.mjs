// Hostile share links against the built dist/: each one must leave a visible notice and a
// working page (heatmaps drawn, JSON export works), with no console errors, no dialog and no
// script or element injected from the link. Teachers paste links from students; students type
// anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import LZString from 'lz-string';
import { waitReady, exportJson, servedBrowser, reusedTab } from './helpers.mjs';

const env = servedBrowser();

const enc = encodeURIComponent;
const XSS = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=2;alert(2)">',
  '<svg/onload=window.__pwned=3>',
  '"><iframe src=javascript:window.__pwned=4>',
  'javascript:alert(5)',
  '{{constructor.constructor("window.__pwned=6")()}}',
];

// name, hash, what the notice must mention (regexp over the notice text)
const CASES = [
  ['oversized hash (300 KB)', '#v=1&tokens=' + 'a+'.repeat(150000), /characters long/],
  ['10 000 tokens (cut to 256, as pasted text is)', '#v=1&tokens=' + Array.from({ length: 10000 }, (_, i) => 't' + i).join('+'), /10000 tokens is more than the limit of 256; kept the first 256/],
  ['unknown version', '#v=99&heads=4&src=random', /version/],
  ['scale 0 (the core needs a positive scale)', '#v=1&scale=0', /outside/],
  ['non-numeric version', '#v=%3Cb%3E1%3C%2Fb%3E&heads=4', /version/],
  ['corrupt compressed payload', '#v=1&tz=%%%25not-lz-string!!', /corrupt|percent/],
  ['compressed payload that is valid base64 but not lz-string', '#v=1&tz=AAAAAAAAAAAAAAAAAAAAAAAA', /corrupt/],
  ['NaN, negative and huge numbers', '#v=1&src=random&heads=NaN&kv=-3&dm=1e308&dk=-0.5&seed=99999999999999999999&win=-5&sharp=Infinity&head=1e9&scale=-1', /not a number|outside|rounded/],
  ['hex, empty and exotic number spellings', '#v=1&src=random&heads=0x10&dm=&dk=1e-400&seed=%E2%88%9E', /not a number|outside/],
  ['unknown keys, prototype keys and duplicates', '#v=1&foo=bar&__proto__=x&constructor=1&heads=2&heads=3&toString=1', /unknown setting/],
  ['broken percent-encoding', '#v=1&tokens=%E0%A4%A&fill=%&view=%ZZ', /percent|not valid|unknown|ignored/],
  ['script and HTML in tokens', '#v=1&tokens=' + XSS.map(enc).join('+'), /shortened/],
  ['script in view and fill values', '#v=1&view=' + enc('<img src=x onerror=alert(1)>') + '&fill=' + enc('<script>alert(1)</script>'), /unknown|not neg_inf/],
  ['T = 10^6 tokens (compressed)', '#v=1&tz=' + LZString.compressToEncodedURIComponent('w '.repeat(1e6)), /limit of 256/],
  ['T = 10^6 in every size field', '#v=1&src=random&heads=1000000&dm=1000000&dk=1000000&win=1000000&pad=999999,1000000&tstart=1048576&tend=1048576', /outside|dropped/],
  ['control and bidi characters in tokens', '#v=1&tokens=' + ['a%E2%80%AEb', 'c%00d', '%E2%80%8B'].join('+'), /control/],
];

// Every link is a fresh load of the page, one after another in the same tab (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1280, height: 900 }, acceptDownloads: true });
async function openWith(hash) {
  const opened = await tab.load(env.server.url + '/' + hash);
  await waitReady(opened.page, 30000);
  return opened;
}

async function assertWorkingPage(page, errors, dialogs, noticeRe, label) {
  const box = page.getByTestId('notices');
  assert.equal(await box.isVisible(), true, `${label}: the notice is not visible`);
  const text = await box.innerText();
  assert.match(text, noticeRe, `${label}: notice says: ${text}`);
  // The heatmap of the zoomed head is drawn at data resolution, at most LIMITS.maxT wide.
  const size = await page.locator('.zoom-panel canvas.hm-data').first().evaluate((c) => [c.width, c.height]);
  assert.ok(size[0] >= 1 && size[0] <= 256 && size[1] >= 1, `${label}: heatmap ${size}`);
  const j = await exportJson(page);
  assert.ok(Array.isArray(j.tokens) && j.tokens.length >= 1 && j.tokens.length <= 256, `${label}: export tokens`);
  assert.ok(j.heads.length >= 1 && j.heads[0].weights.length === j.tokens.length);
  // Nothing from the link ran or became markup.
  const injected = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    handlers: document.querySelectorAll('[onerror],[onload],[onclick]').length,
    iframes: document.querySelectorAll('iframe').length,
    imgs: [...document.querySelectorAll('img')].filter((i) => i.getAttribute('src') === 'x').length,
    scripts: [...document.querySelectorAll('script')].filter((s) => /pwned|alert/.test(s.textContent)).length,
  }));
  assert.deepEqual(injected, { pwned: null, handlers: 0, iframes: 0, imgs: 0, scripts: 0 }, label);
  assert.deepEqual(dialogs, [], `${label}: dialogs`);
  assert.deepEqual(errors, [], `${label}: console errors`);
}

for (const [name, hash, noticeRe] of CASES) {
  test(`hostile link: ${name}`, async () => {
    const { page, errors, dialogs } = await openWith(hash);
    await assertWorkingPage(page, errors, dialogs, noticeRe, name);
  });
}

test('hostile link: the token text is shown as text, never as markup', async () => {
  const short = ['<b>bold</b>', '<i>x</i>', '&lt;', '"q"'];
  const { page, errors, dialogs } = await openWith('#v=1&tokens=' + [...short, ...XSS].map(enc).join('+'));
  const j = await exportJson(page);
  for (const t of short) assert.ok(j.tokens.includes(t), `${t} kept verbatim`);
  const labels = await page.locator('.zoom-panel .hm-rl .tok').allTextContents();
  assert.ok(labels.includes('<b>bold</b>'), `row labels: ${labels.slice(0, 6)}`);
  assert.equal(await page.locator('.zoom-panel b, .zoom-panel i').count(), 0, 'no element made from a token');
  await assertWorkingPage(page, errors, dialogs, /shortened/, 'markup tokens');
});

test('hostile link: pasted into an open page (hashchange), each is corrected with a notice', async () => {
  const { page, errors, dialogs } = await openWith('');
  for (const [name, hash, noticeRe] of CASES) {
    await page.evaluate((h) => (location.hash = h), hash);
    await page.waitForFunction(() => !document.querySelector('[data-testid="notices"]').hidden, null, { timeout: 10000 });
    await waitReady(page, 30000);
    await assertWorkingPage(page, errors, dialogs, noticeRe, `hashchange: ${name}`);
    // Dismiss, so the next link has to bring its own notice back.
    await page.getByTestId('notices').getByRole('button', { name: /dismiss/i }).click();
    assert.equal(await page.getByTestId('notices').isHidden(), true);
  }
});
