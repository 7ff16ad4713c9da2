// A log–log chart of time against T as an SVG: one series per kind of measurement (median with
// a min–max whisker per point, its fitted power law dashed), an optional reference slope, labels
// at the right edge kept apart. Styled by the .timing-chart rules in styles.css (series colours
// come from the `cls` class of each series).
import type { Fit } from '../measure/model';

const SVG = 'http://www.w3.org/2000/svg';
function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export interface ChartPoint {
  t: number;
  median: number;
  min: number;
  max: number;
  /** Tooltip text. */
  title: string;
}

export interface ChartSeries {
  label: string;
  /** CSS class of the series' strokes and fills, e.g. 'k-naive'. */
  cls: string;
  marker: 'circle' | 'square' | 'diamond';
  points: ChartPoint[];
  fit: Fit | null;
  /** Vertical offset of the label of a series that stops before the last T (default −8). */
  labelDy?: number;
}

export interface LogLogChartOptions {
  /** The planned Ts (x ticks). */
  ts: number[];
  series: ChartSeries[];
  testid: string;
  ariaLabel: string;
  xLabel: string;
  yLabel: string;
  /** Shown while there are no points. */
  empty: string;
  /** Reference lines (slope on the log–log axes) through a series' first fitted point. */
  refs?: { slope: number; label: string; series: number }[];
  /** Unique id for the clip path. */
  clipId: string;
  /** Room for the labels at the right edge, in viewBox units (150 by default). */
  right?: number;
}

export function msTick(v: number): string {
  if (v >= 1000) return `${v / 1000} s`;
  if (v >= 1) return `${v} ms`;
  return `${Number(v.toPrecision(1))} ms`;
}

export function logLogChart(o: LogLogChartOptions): SVGSVGElement {
  const planned = o.ts;
  const W = 720,
    H = 400,
    L = 74,
    R = o.right ?? 150,
    Tp = 18,
    B = 54;
  const xl0 = Math.log2(planned[0]);
  const xl1 = Math.log2(planned[planned.length - 1]);
  const xspan = Math.max(1, xl1 - xl0);
  const x = (t: number) => L + ((Math.log2(t) - xl0) / xspan) * (W - L - R);
  let lo = Infinity,
    hi = -Infinity;
  for (const se of o.series)
    for (const p of se.points) {
      // A sample can read 0 ms (the clock's resolution): it has no place on a log axis, so the
      // axis spans the positive samples and y() puts a zero on the axis's floor.
      if (p.min > 0) lo = Math.min(lo, p.min);
      if (p.max > 0) hi = Math.max(hi, p.max);
    }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    lo = 0.01;
    hi = 1000;
  }
  let d0 = Math.floor(Math.log10(lo));
  let d1 = Math.ceil(Math.log10(hi));
  if (d1 - d0 < 2) {
    d0 -= 1;
    d1 = Math.max(d1, d0 + 2);
  }
  const y = (ms: number) => Tp + (1 - (Math.log10(Math.max(ms, 10 ** d0)) - d0) / (d1 - d0)) * (H - Tp - B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'data-testid': o.testid, 'aria-label': o.ariaLabel });
  const clip = s('clipPath', { id: o.clipId });
  clip.append(s('rect', { x: L, y: Tp, width: W - L - R, height: H - Tp - B }));
  svg.append(clip);
  for (let d = d0; d <= d1; d++) {
    const v = 10 ** d;
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(s('text', { x: L - 8, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, msTick(v)));
    if (d < d1)
      for (const m of [2, 5])
        svg.append(s('line', { x1: L, x2: W - R, y1: y(m * v), y2: y(m * v), class: 'grid minor' }));
  }
  for (const t of planned) {
    svg.append(s('line', { x1: x(t), x2: x(t), y1: Tp, y2: H - B, class: 'grid' }));
    svg.append(s('text', { x: x(t), y: H - B + 18, class: 'tick', 'text-anchor': 'middle' }, String(t)));
  }
  svg.append(s('rect', { x: L, y: Tp, width: W - L - R, height: H - Tp - B, class: 'frame' }));
  svg.append(s('text', { x: (L + W - R) / 2, y: H - 10, class: 'axis', 'text-anchor': 'middle' }, o.xLabel));
  const yc = (Tp + H - B) / 2;
  svg.append(
    s('text', { x: 16, y: yc, class: 'axis', 'text-anchor': 'middle', transform: `rotate(-90 16 ${yc})` }, o.yLabel),
  );

  const labels: { y: number; text: string; cls: string }[] = [];
  for (const ref of o.refs ?? []) {
    const se = o.series[ref.series];
    if (!se || se.points.length === 0) continue;
    const p0 = (se.fit && se.points.find((p) => p.t === se.fit!.ts[0])) || se.points[se.points.length - 1];
    const at = (t: number) => p0.median * (t / p0.t) ** ref.slope;
    const t0 = planned[0],
      t1 = planned[planned.length - 1];
    const g = s('g', { 'clip-path': `url(#${o.clipId})` });
    g.append(s('line', { x1: x(t0), y1: y(at(t0)), x2: x(t1), y2: y(at(t1)), class: 'ref' }));
    svg.append(g);
    const yr = y(at(t1));
    if (yr >= Tp && yr <= H - B) labels.push({ y: yr, text: ref.label, cls: 'ref-label' });
    else if (yr < Tp) {
      // The line leaves the plot at the top: label it where it does.
      const tTop = p0.t * (10 ** d1 / p0.median) ** (1 / ref.slope);
      svg.append(
        s(
          'text',
          { x: Math.min(x(tTop), W - R) - 6, y: Tp + 14, class: 'series-label ref-label', 'text-anchor': 'end' },
          ref.label,
        ),
      );
    }
  }
  for (const se of o.series) {
    const ps = se.points;
    if (ps.length === 0) continue;
    const fk = se.fit;
    if (fk) {
      const a = fk.ts[0],
        b = fk.ts[fk.ts.length - 1];
      const fy = (t: number) => Math.exp(fk.intercept + fk.exponent * Math.log(t));
      svg.append(s('line', { x1: x(a), y1: y(fy(a)), x2: x(b), y2: y(fy(b)), class: `fit ${se.cls}` }));
    }
    svg.append(
      s('polyline', { points: ps.map((p) => `${x(p.t)},${y(p.median)}`).join(' '), class: `series ${se.cls}` }),
    );
    for (const p of ps) {
      svg.append(s('line', { x1: x(p.t), x2: x(p.t), y1: y(p.min), y2: y(p.max), class: `whisker ${se.cls}` }));
      for (const v of [p.min, p.max])
        svg.append(s('line', { x1: x(p.t) - 5, x2: x(p.t) + 5, y1: y(v), y2: y(v), class: `whisker ${se.cls}` }));
      const cx = x(p.t),
        cy = y(p.median);
      const mark =
        se.marker === 'circle'
          ? s('circle', { cx, cy, r: 5.5, class: `dot ${se.cls}` })
          : se.marker === 'diamond'
            ? s('polygon', {
                points: `${cx},${cy - 7} ${cx + 7},${cy} ${cx},${cy + 7} ${cx - 7},${cy}`,
                class: `dot ${se.cls}`,
              })
            : s('rect', { x: cx - 5, y: cy - 5, width: 10, height: 10, class: `dot ${se.cls}` });
      mark.append(s('title', {}, p.title));
      svg.append(mark);
    }
    const last = ps[ps.length - 1];
    const text = fk ? `${se.label}, p = ${fk.exponent.toFixed(2)}` : se.label;
    if (last.t === planned[planned.length - 1]) labels.push({ y: y(last.median), text, cls: se.cls });
    else
      svg.append(
        s('text', { x: x(last.t) + 10, y: y(last.median) + (se.labelDy ?? -8), class: `series-label ${se.cls}` }, text),
      );
  }
  labels.sort((a, b) => a.y - b.y);
  for (let i = 1; i < labels.length; i++) labels[i].y = Math.max(labels[i].y, labels[i - 1].y + 18);
  for (const l of labels)
    svg.append(s('text', { x: W - R + 8, y: Math.min(l.y, H - B) + 4, class: `series-label ${l.cls}` }, l.text));
  if (o.series.every((se) => se.points.length === 0))
    svg.append(s('text', { x: (L + W - R) / 2, y: yc, class: 'empty', 'text-anchor': 'middle' }, o.empty));
  return svg;
}
