// The stage's Export bar: JSON, CSV weights, CSV output and a PNG of any heatmap the view shows.
import { el, clear } from '../ui/dom';
import type { Heatmap } from '../ui/heatmap';
import { projections } from './compute';
import {
  exportJson,
  exportWeightsCsv,
  exportOutputCsv,
  type Breakdown,
  type Projections,
  type Selection,
  type HeadPoints,
} from './export';
import { summarize } from './selection';
import { resultOptions } from './util';
import { variantOptions } from '../shared/variant';
import type { AttentionResult } from './protocol';
import type { ModelSlice } from './state';
import type { VariantSlice } from '../shared/variant';
import type { AttnCore } from '../wasm/load-core';
import { download, heatmapPng } from '../shared/export';

export interface ExportBar {
  root: HTMLElement;
  /** After a redraw: the view's heatmaps as the PNG choices (keeping the user's pick, else
   *  `preferred`); `trained` hides the exports of this page's example. */
  update(heatmaps: { name: string }[], opts: { preferred?: string; trained: boolean }): void;
}

/** `S`: the page's state (the JSON export records its link fields). */
/** The selected cell taken apart by the core, as the "Why this weight?" panel shows it. */
function breakdownOf(
  core: AttnCore,
  r: AttentionResult,
  s: ModelSlice & VariantSlice,
  p: Projections,
  [head, query, key]: number[],
): Breakdown {
  const variant = variantOptions(s.lesson);
  const b = core.scoreBreakdown(p.q, p.k, {
    heads: r.heads,
    kvHeads: p.kvHeads,
    dk: p.dk,
    dv: p.dv,
    ...resultOptions(r, s.model),
    ...variant,
    precision: 'float32',
    head,
    query,
    key,
  });
  return {
    head,
    query,
    key,
    q: Array.from(b.q),
    k: Array.from(b.k),
    products: Array.from(b.products),
    scale: b.scale,
    bias: b.bias,
    score: b.score,
    weight: r.weights[(head * r.t + query) * r.tk + key],
  };
}

/** Each head's queries and keys as points (core.qkMap), as the map under the Heads view draws them. */
function mapsOf(core: AttnCore, r: AttentionResult, s: ModelSlice & VariantSlice, p: Projections): HeadPoints[] {
  const variant = variantOptions(s.lesson);
  return Array.from({ length: r.heads }, (_, head) => {
    const m = core.qkMap(p.q, p.k, {
      heads: r.heads,
      kvHeads: p.kvHeads,
      dk: p.dk,
      dv: p.dv,
      ...resultOptions(r, s.model),
      ...variant,
      precision: 'float32',
      head,
    });
    const pts = (a: Float64Array) => Array.from({ length: a.length / 2 }, (_, i) => [a[2 * i], a[2 * i + 1]]);
    return { queries: pts(m.queries), keys: pts(m.keys), explained: [m.explained[0], m.explained[1]] };
  });
}

export function createExportBar<S extends ModelSlice & VariantSlice>(deps: {
  shown(): { state: S; result: AttentionResult } | null;
  /** The live state's selected cell ([head, query, key] or []): the JSON export takes it apart. */
  cell(): number[];
  /** The live state's zoomed head and picked queries and keys: the JSON export sums them. */
  picks(): { head: number; qsel: number[]; ksel: number[] };
  heatmaps(): { name: string; heatmap: Heatmap }[];
  /** The page-thread core: the JSON export projects each head's q, k, v with it. */
  core(): Promise<AttnCore>;
  /** The state keyed by link keys (the page's table). */
  linkFields(s: S): Record<string, unknown>;
}): ExportBar {
  const pngSelect = el('select', { 'aria-label': 'Heatmap to save as PNG' });
  const btn = (text: string, testid: string, on: () => void) => {
    const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
    b.addEventListener('click', on);
    return b;
  };
  const csv = (name: string, of: (r: AttentionResult) => string) => () => {
    const o = deps.shown();
    if (o) download(name, of(o.result), 'text/csv');
  };
  const exampleOnly = [
    btn('JSON', 'export-json', () => void saveJson()),
    btn('CSV weights', 'export-csv-weights', csv('attention-weights.csv', exportWeightsCsv)),
    btn('CSV output', 'export-csv-output', csv('attention-output.csv', exportOutputCsv)),
  ];
  const pngGroup = el(
    'span',
    { class: 'png-group' },
    pngSelect,
    btn('PNG', 'export-png', () => void savePng()),
  );
  const root = el(
    'div',
    { class: 'export', 'data-section': 'export' },
    el('span', { class: 'export-title', text: 'Export' }),
    ...exampleOnly,
    pngGroup,
  );

  async function savePng(): Promise<void> {
    const item = deps.heatmaps().find((h) => h.name === pngSelect.value);
    const d = item?.heatmap.current;
    if (!item || !d) return;
    const blob = await heatmapPng(item.heatmap.dataCanvas, d, `Attention Playground — ${item.name}`);
    if (blob) download(`${item.name}.png`, blob);
  }
  async function saveJson(): Promise<void> {
    const o = deps.shown();
    if (!o) return;
    let proj: Projections | null = null;
    if (!o.result.source) {
      try {
        // A result that is not cross-attention (the student's arrays) pairs with self-attention's q, k, v.
        const m = o.result.cross ? o.state.model : { ...o.state.model, kvTokens: [] };
        proj = projections(await deps.core(), { ...o.state, model: m });
      } catch {
        /* the export goes without q, k, v */
      }
    }
    let breakdown: Breakdown | null = null;
    const c = deps.cell();
    if (proj && c.length === 3 && c[0] < o.result.heads && c[1] < o.result.t && c[2] < o.result.tk) {
      try {
        breakdown = breakdownOf(await deps.core(), o.result, o.state, proj, c);
      } catch {
        /* the export goes without the breakdown */
      }
    }
    let maps: HeadPoints[] | null = null;
    if (proj) {
      try {
        maps = mapsOf(await deps.core(), o.result, o.state, proj);
      } catch {
        /* the export goes without the maps */
      }
    }
    let selection: Selection | null = null;
    const p = deps.picks();
    if (p.qsel.length + p.ksel.length > 0) {
      try {
        const r = o.result;
        const { beyond: _, ...s } = summarize(
          await deps.core(),
          r.weights,
          { heads: r.heads, tq: r.t, tk: r.tk },
          Math.min(p.head, r.heads - 1),
          p.qsel,
          p.ksel,
        );
        selection = s;
      } catch {
        /* the export goes without the selection */
      }
    }
    download(
      'attention.json',
      exportJson(o.result, deps.linkFields(o.state), proj, breakdown, { selection, maps }),
      'application/json',
    );
  }

  return {
    root,
    update(heatmaps, { preferred, trained }) {
      for (const b of exampleOnly) b.hidden = trained; // they export this page's example, not the trained model
      const keep = pngSelect.value;
      clear(pngSelect);
      for (const { name } of heatmaps) pngSelect.append(el('option', { value: name, text: name }));
      // Keep the user's pick across redraws, else the preferred one.
      const pick = [keep, preferred].find((n) => n && [...pngSelect.options].some((o) => o.value === n));
      if (pick) pngSelect.value = pick;
      pngGroup.hidden = pngSelect.options.length === 0;
    },
  };
}
