import { describe, it, expect } from 'vitest';
import { parseEmbed, embedSnippet, cspSnippet, parseHeight, switchOff, RESIZE_MESSAGE } from '../../web/src/embed/embed';
import { buildLut, VIRIDIS_LUT, lutIndex } from '../../web/src/ui/colormap';

describe('embed options', () => {
  it('a plain page hides nothing', () => {
    expect(parseEmbed('').embed).toBe(false);
    expect(parseEmbed('').hidden.size).toBe(0);
  });
  it('embed mode is compact and show= brings sections back', () => {
    const c = parseEmbed('?embed=1&show=tokens,mask,bogus');
    expect(c.embed).toBe(true);
    expect(c.hidden.has('tokens')).toBe(false);
    expect(c.hidden.has('mask')).toBe(false);
    expect(c.hidden.has('model')).toBe(true);
    expect(c.hidden.has('presets')).toBe(true);
    expect(c.hidden.has('tabs')).toBe(false);
  });
  it('hide=controls hides every control group; a bad id is dropped', () => {
    const c = parseEmbed('?embed=1&show=controls&hide=controls,tabs&id=%3Cx%3E');
    for (const g of ['tokens', 'model', 'mask', 'scale', 'tabs'] as const) expect(c.hidden.has(g)).toBe(true);
    expect(c.frameId).toBeNull();
  });
  it('the snippet checks origin and source and escapes the URL', () => {
    const s = embedSnippet('https://example.org/ap/', '#v=1&tokens=%3Cb%3E+"x"');
    expect(s).toContain('e.origin !== "https://example.org"');
    expect(s).toContain('e.source !== f.contentWindow');
    expect(s).toContain(RESIZE_MESSAGE);
    expect(s).toContain('d.version === 1');
    expect(s).not.toMatch(/src="[^"]*"x"/);
    expect(s).toContain('embed=1');
  });
  it('size switches: maxheight, autosize, fit (fit only in embed mode, and it sends no heights)', () => {
    expect(parseEmbed('?embed=1').autosize).toBe(true);
    expect(parseEmbed('?embed=1').maxHeight).toBeNull();
    expect(parseEmbed('?embed=1&maxheight=700').maxHeight).toBe(700);
    expect(parseEmbed('?embed=1&maxheight=50').maxHeight).toBeNull(); // below 100 px: ignored
    expect(parseEmbed('?embed=1&maxheight=abc').maxHeight).toBeNull();
    expect(parseEmbed('?embed=1&autosize=0').autosize).toBe(false);
    expect(parseEmbed('?embed=1&autosize=off').autosize).toBe(false);
    expect(parseEmbed('?embed=1&fit=1').fit).toBe(true);
    expect(parseEmbed('?embed=1&fit=1').autosize).toBe(false);
    expect(parseEmbed('?fit=1').fit).toBe(false);
  });
  it('heights and switches from attributes', () => {
    expect(parseHeight('480')).toBe(480);
    expect(parseHeight(' 480px ')).toBe(480);
    expect(parseHeight('48')).toBeNull();
    expect(parseHeight('20000')).toBeNull();
    expect(parseHeight('1e3')).toBeNull();
    expect(parseHeight(null)).toBeNull();
    for (const v of ['0', 'false', 'off', 'NO']) expect(switchOff(v)).toBe(true);
    for (const v of ['', '1', 'on', null]) expect(switchOff(v)).toBe(false);
  });
  it('the strict-CSP snippet has no inline script or style and loads the listener by address', () => {
    const s = cspSnippet('https://example.org/ap/', '#v=1&tokens=%3Cb%3E+"x"', { show: 'tokens', maxHeight: 700 });
    expect(s).not.toMatch(/style=/);
    expect(s).not.toMatch(/<script>/);
    expect(s).toContain('<script src="https://example.org/ap/embed-listener.js" defer></script>');
    expect(s).toContain('data-attention-playground');
    expect(s).toContain('data-maxheight="700"');
    expect(s).not.toMatch(/src="[^"]*"x"/);
  });
});

describe('viridis LUT', () => {
  it('starts and ends at the published end points and passes through the midpoint', () => {
    expect(Array.from(VIRIDIS_LUT.slice(0, 3))).toEqual([0x44, 0x01, 0x54]);
    expect(Array.from(VIRIDIS_LUT.slice(255 * 3))).toEqual([0xfd, 0xe7, 0x25]);
    const lut11 = buildLut(['#000000', '#ffffff'], 3);
    expect(Array.from(lut11)).toEqual([0, 0, 0, 128, 128, 128, 255, 255, 255]);
  });
  it('clamps values outside the range', () => {
    expect(lutIndex(-5, 0, 1)).toBe(0);
    expect(lutIndex(5, 0, 1)).toBe(255);
    expect(lutIndex(0.5, 0, 0)).toBe(128);
  });
});
