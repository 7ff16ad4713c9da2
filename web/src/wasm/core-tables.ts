// The core's answers the page needs before any core has loaded: which attention variants the core
// refuses, asked of the core itself when it is built (cpp/tools/core_tables.mjs writes
// build/wasm/attn_core_tables.mjs beside attn_core.mjs). The page keeps no copy of the rule
// (validate_variant in cpp/src/attention.cpp); shared/variant.ts corrects a link with it.
import tables from '../../../build/wasm/attn_core_tables.mjs';
import type { MaskMode, Normalizer, PositionEncoding, Precision } from './attn-core';

/** The variant options the core's rule reads (the page's variant state has these and the bias). */
export interface VariantChoice {
  normalizer: Normalizer;
  position: PositionEncoding;
  maxShift: boolean;
  qkNorm: boolean;
  precision: Precision;
  maskMode: MaskMode;
}

/**
 * The option the core refuses for this variant (its first check that fails), or null when the core
 * accepts it. `dk`: d_k when known (RoPE needs it even); null asks about an even one.
 */
export function variantRefusal(v: VariantChoice, dk: number | null): keyof VariantChoice | null {
  const { axes, refused } = tables.variant;
  const dkOdd = dk !== null && dk % 2 === 1;
  let index = 0;
  for (const [name, values] of axes) {
    const value = name === 'dkOdd' ? dkOdd : v[name as keyof VariantChoice];
    const at = (values as readonly unknown[]).indexOf(value); // (the generated file's own types are narrower)
    if (at < 0) throw new Error(`variantRefusal: ${name} ${String(value)} is not one of the core's values`);
    index = index * values.length + at;
  }
  const c = refused[index];
  if (c === '-') return null;
  const field = axes[Number(c)][0];
  // d_k itself is not the page's to change: RoPE is what gets switched off.
  return (field === 'dkOdd' ? 'position' : field) as keyof VariantChoice;
}
