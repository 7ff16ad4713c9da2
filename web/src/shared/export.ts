// Generic export helpers every feature may use: save a file, and a labelled PNG of a heatmap.
import type { HeatmapData } from '../ui/heatmap';
import { fmt } from '../ui/dom';

export function download(name: string, data: Blob | string, type = 'application/octet-stream'): void {
  const blob = typeof data === 'string' ? new Blob([data], { type }) : data;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Labelled PNG of a heatmap: title, token labels on both axes, cells scaled without smoothing. */
export function heatmapPng(src: HTMLCanvasElement, d: HeatmapData, title: string): Promise<Blob | null> {
  const cell = Math.max(4, Math.min(40, Math.floor(720 / Math.max(d.rows, d.cols))));
  const labelW = d.rowLabels ? 130 : 10;
  const labelH = d.colLabels ? 110 : 10;
  const W = labelW + d.cols * cell + 20;
  const H = 44 + labelH + d.rows * cell + 20;
  const c = document.createElement('canvas');
  c.width = W;
  c.height = H;
  const g = c.getContext('2d')!;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, W, H);
  g.fillStyle = '#111';
  g.font = '600 18px system-ui, sans-serif';
  g.fillText(title, 10, 28);
  g.imageSmoothingEnabled = false;
  const top = 44 + labelH;
  g.drawImage(src, labelW, top, d.cols * cell, d.rows * cell);
  const fs = Math.max(8, Math.min(14, cell * 0.7));
  g.font = `${fs}px system-ui, sans-serif`;
  const every = Math.max(1, Math.ceil((fs + 2) / cell));
  if (d.rowLabels) {
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i < d.rows; i += every)
      g.fillText(`${d.rowLabels[i]} ${i}`, labelW - 6, top + (i + 0.5) * cell, labelW - 10);
  }
  if (d.colLabels) {
    g.textAlign = 'left';
    g.textBaseline = 'middle';
    for (let j = 0; j < d.cols; j += every) {
      g.save();
      g.translate(labelW + (j + 0.5) * cell, top - 6);
      g.rotate(-Math.PI / 2);
      g.fillText(`${j} ${d.colLabels[j]}`, 0, 0, labelH - 10);
      g.restore();
    }
  }
  g.textAlign = 'left';
  g.fillStyle = '#555';
  g.font = '12px system-ui, sans-serif';
  g.fillText(`viridis ${fmt(d.lo, 2)} → ${fmt(d.hi, 2)}; grey = masked, crimson = NaN`, 10, H - 6);
  return new Promise((resolve) => c.toBlob((b) => resolve(b), 'image/png'));
}
