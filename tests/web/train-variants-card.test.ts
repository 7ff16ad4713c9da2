// The "Which variants form induction heads?" card: the figures its sentences quote are the
// measured data's (web/src/train/induction-variants-data.ts, checked against re-runs by
// tests/js/train-variants-experiment.test.mjs), and each row's link replays that row's config.
import { describe, expect, it } from 'vitest';
import { INDUCTION_VARIANTS as X } from '../../web/src/train/induction-variants-data';
import { VARIANTS_RESULT, crossedText, variantRowSettings } from '../../web/src/train/variants-card';
import { trainerConfig } from '../../web/src/train/config';

const row = (id: string) => X.rows.find((r) => r.id === id)!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) / 2];

describe('variants card', () => {
  it('quotes the measured medians and ranges', () => {
    const at = (id: string) => median(row(id).at90.filter((x): x is number => x !== null));
    expect(crossedText(row('softmax'))).toBe(`5/5, median ${at('softmax')}`);
    expect(VARIANTS_RESULT).toContain(`median ${at('softmax')} steps`);
    expect(at('softmax1')).toBe(at('softmax'));
    expect(VARIANTS_RESULT).toContain(`medians ${at('relu')} and ${at('linear')}`);
    expect(VARIANTS_RESULT).toContain(`sigmoid too (median ${at('sigmoid')};`);
    expect(VARIANTS_RESULT).toContain(`scale 10 (median ${at('qknorm-10')})`);
    // Four seeds cross by step 300; seed 1 much later (the text quotes its step).
    const sig = row('sigmoid').at90;
    expect(sig.filter((x, i) => i !== 1 && x !== null && x <= 300).length).toBe(4);
    expect(sig[1]).toBeGreaterThan(600);
    expect(VARIANTS_RESULT).toContain(`seed 1 only at step ${sig[1]!.toLocaleString('en-US')},`);
    expect(row('rope').at90.every((x) => x === 200)).toBe(true);
    const alibi = row('alibi');
    expect(alibi.at90.every((x) => x === null)).toBe(true);
    const acc = alibi.finalAccuracy;
    expect(VARIANTS_RESULT).toContain(`accuracy ${Math.min(...acc).toFixed(2)}–${Math.max(...acc).toFixed(2)}`);
    expect(alibi.prev0.every((x) => x.toFixed(2) === '0.13')).toBe(true);
    expect(row('qknorm').at90.every((x) => x === null)).toBe(true);
  });

  it('a row link replays the measured run: config A, the row, the seed, data seed 0, 1,000 steps', () => {
    const s = variantRowSettings(row('rope'), 3);
    expect(trainerConfig(s)).toMatchObject({ positional: 'rope', seed: 3, dataSeed: 0, vocab: 32, seqLen: 32, layers: 2, heads: 2, dModel: 64, batch: 32, lr: 0.01 });
    expect(s.until).toBe(1000);
    expect(trainerConfig(variantRowSettings(row('qknorm-10'), 0))).toMatchObject({ qkNorm: true, scale: 10 });
  });
});
