// Exports of the current view: JSON ({ tokens, heads: [{ weights }], output, state }), CSV of the
// weights and of the output (a heatmap's PNG: shared/export.ts). NaN is written as null in JSON.
import type { AttentionResult } from './protocol';

function rows(a: Float32Array, r: number, c: number, offset = 0): (number | null)[][] {
  const out: (number | null)[][] = [];
  for (let i = 0; i < r; i++) {
    const row: (number | null)[] = [];
    for (let j = 0; j < c; j++) {
      const v = a[offset + i * c + j];
      row.push(Number.isFinite(v) ? v : null);
    }
    out.push(row);
  }
  return out;
}

/** The projections of the result's example, split per head (compute.ts's projections()). */
export interface Projections {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dk: number;
  dv: number;
  kvHeads: number;
}

/** The selected cell taken apart (core.scoreBreakdown): q and k as the score uses them (after
 *  qk-norm and RoPE), their products, scale, ALiBi's bias, the score and the drawn weight. */
export interface Breakdown {
  head: number;
  query: number;
  key: number;
  q: number[];
  k: number[];
  products: number[];
  scale: number;
  bias: number;
  score: number;
  weight: number;
}

/** The zoomed head's picked queries and keys (the links' qsel, ksel) summed by the core: mean and
 *  sum (T_k) of the picked queries' weights per key, column (T_q) each query's weight on the
 *  picked keys. */
export interface Selection {
  head: number;
  queries: number[];
  keys: number[];
  mean: number[];
  sum: number[];
  column: number[];
}

/** One head's queries and keys as points (core.qkMap): [x, y] each, and each axis's share of the
 *  squared length. */
export interface HeadPoints {
  queries: number[][];
  keys: number[][];
  explained: number[];
}

/** `fields`: the page's state keyed by link keys (the shape of v1 links). `proj`: each head's q, k
 *  and v (X·W, before qk-norm and RoPE) join its weights, so the heatmap can be recomputed.
 *  `breakdown`: the selected cell (the link's `cell`) taken apart; `extra.selection`: the picked
 *  queries and keys summed up; `extra.maps`: each head's queries and keys as points (`map`). */
export function exportJson(
  r: AttentionResult,
  fields: Record<string, unknown>,
  proj: Projections | null = null,
  breakdown: Breakdown | null = null,
  extra: { selection?: Selection | null; maps?: HeadPoints[] | null } = {},
): string {
  const T = r.t;
  const Tk = r.tk;
  const heads = Array.from({ length: r.heads }, (_, h) => {
    const head: Record<string, unknown> = {
      head: h,
      weights: rows(r.weights, T, Tk, h * T * Tk),
      output: rows(r.headOutputs, T, r.dv, h * T * r.dv),
    };
    if (proj) {
      const g = Math.floor(h / (r.heads / proj.kvHeads)); // GQA: the K/V head it reads
      head.q = rows(proj.q, T, proj.dk, h * T * proj.dk);
      head.k = rows(proj.k, Tk, proj.dk, g * Tk * proj.dk);
      head.v = rows(proj.v, Tk, proj.dv, g * Tk * proj.dv);
    }
    if (extra.maps?.[h]) head.map = extra.maps[h];
    return head;
  });
  return JSON.stringify({
    tokens: r.tokens,
    // Cross-attention: the keys' and values' sentence (the weights are T_q × T_k).
    ...(r.cross ? { kvTokens: r.keyTokens } : {}),
    heads,
    output: rows(r.output, T, r.dModel),
    merged: rows(r.merged, T, r.heads * r.dv),
    shape: {
      t: T,
      ...(r.cross ? { tk: Tk } : {}),
      heads: r.heads,
      kvHeads: r.kvHeads,
      dModel: r.dModel,
      dk: r.dk,
      dv: r.dv,
    },
    scale: r.scale,
    ...(breakdown ? { breakdown } : {}),
    ...(extra.selection ? { selection: extra.selection } : {}),
    // The state by its link keys (flat, as in a #v=1 link), so the export's format does not
    // depend on how the code groups the fields.
    state: fields,
  });
}

function csvCell(s: string): string {
  // Quote always; neutralise spreadsheet formulas in token text.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function exportWeightsCsv(r: AttentionResult): string {
  const T = r.t;
  const Tk = r.tk;
  const lines = ['head,query_pos,query_token,key_pos,key_token,weight'];
  for (let h = 0; h < r.heads; h++)
    for (let i = 0; i < T; i++)
      for (let j = 0; j < Tk; j++)
        lines.push(
          `${h + 1},${i},${csvCell(r.tokens[i])},${j},${csvCell(r.keyTokens[j])},${r.weights[(h * T + i) * Tk + j]}`,
        );
  return lines.join('\n') + '\n';
}

export function exportOutputCsv(r: AttentionResult): string {
  const header = ['pos', 'token', ...Array.from({ length: r.dModel }, (_, k) => `dim_${k}`)];
  const lines = [header.join(',')];
  for (let i = 0; i < r.t; i++)
    lines.push(
      [
        String(i),
        csvCell(r.tokens[i]),
        ...Array.from(r.output.subarray(i * r.dModel, (i + 1) * r.dModel), String),
      ].join(','),
    );
  return lines.join('\n') + '\n';
}
