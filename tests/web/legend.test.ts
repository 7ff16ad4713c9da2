// The colour legend's tick labels (ui/legend.ts): a small range (the |Δ| of a comparison) gets
// enough digits, or scientific form, for its ticks to differ; the 0…1 weight scale reads as before.
import { describe, expect, it } from 'vitest';
import { tickLabels, tickScale } from '../../web/src/ui/legend';

describe('legend ticks', () => {
  it('0…1 and wide ranges keep their short labels', () => {
    expect(tickLabels(0, 1)).toEqual(['0.00', '0.25', '0.50', '0.75', '1.00']);
    expect(tickLabels(0, 40)).toEqual(['0', '10', '20', '30', '40']);
  });
  it('a |Δ| scale up to 0.0121 gets decimals enough for five different ticks', () => {
    const t = tickLabels(0, 0.0121);
    expect(t).toEqual(['0.000', '0.003', '0.006', '0.009', '0.012']);
    expect(tickLabels(0, 0.01)).toEqual(['0.000', '0.003', '0.005', '0.007', '0.010']);
    expect(new Set(t).size).toBe(5);
  });
  it('a float32-sized |Δ| scale shares one power of ten, said once beside the title', () => {
    expect(tickScale(0, 1.2e-7)).toEqual({ labels: ['0.0', '0.3', '0.6', '0.9', '1.2'], times: '×1e−7' });
    // Symmetric: every minus sign the same, five short labels that fit 180 px.
    expect(tickScale(-1e-7, 1e-7)).toEqual({ labels: ['−1.0', '−0.5', '0.0', '0.5', '1.0'], times: '×1e−7' });
    expect(tickLabels(0, 1.2e-7)).toEqual(['0.0', '0.3', '0.6', '0.9', '1.2']);
  });
});
