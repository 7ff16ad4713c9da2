// The attention mask as the core applies it (docs/js-api.md), computed in JS so the page can
// draw forbidden cells distinctly from a learned 0. Pure.
export interface MaskOptions {
  t: number;
  causal: boolean;
  /** 0 = off; key j allowed iff j > i - window. */
  window: number;
  /** Padded key positions. */
  pad: readonly number[];
}

/** Uint8Array(T*T), 1 = allowed, row-major (query, key). Square: T_q = T_k, so causal is j <= i. */
export function allowedMask(o: MaskOptions): Uint8Array {
  const { t } = o;
  const m = new Uint8Array(t * t);
  const padded = new Uint8Array(t);
  for (const p of o.pad) if (p >= 0 && p < t) padded[p] = 1;
  for (let i = 0; i < t; i++) {
    for (let j = 0; j < t; j++) {
      let ok = padded[j] === 0;
      if (o.causal && j > i) ok = false;
      if (o.window > 0 && j <= i - o.window) ok = false;
      m[i * t + j] = ok ? 1 : 0;
    }
  }
  return m;
}

/** Key padding as the core wants it: Uint8Array(T), 1 = real token. */
export function keyPadding(t: number, pad: readonly number[]): Uint8Array {
  const k = new Uint8Array(t).fill(1);
  for (const p of pad) if (p >= 0 && p < t) k[p] = 0;
  return k;
}

/** Rows of the mask with no allowed key. */
export function fullyMaskedRows(mask: Uint8Array, t: number): number[] {
  const rows: number[] = [];
  for (let i = 0; i < t; i++) {
    let any = false;
    for (let j = 0; j < t && !any; j++) any = mask[i * t + j] === 1;
    if (!any) rows.push(i);
  }
  return rows;
}
