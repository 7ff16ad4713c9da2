// What the heatmap's overlay draws over the data canvas for the mask and NaN: a veil or hatching
// on forbidden cells, a cross on NaN cells. Sizes in the overlay's pixels per cell (sx, sy).

/** The part of a heatmap's data the overlay reads. */
interface Cells {
  rows: number;
  cols: number;
  values: Float32Array;
  forbidden?: Uint8Array | null;
}

export function drawMaskAndNaN(ctx: CanvasRenderingContext2D, d: Cells, sx: number, sy: number): void {
  if (sx < 6 && d.forbidden) {
    // Cells too small to hatch: a forbidden cell that holds weight (the −1e9 fill gives a fully
    // masked row uniform weight) gets a flat grey veil, so it stays distinct from an allowed one
    // at every T. (A forbidden cell with zero weight is already painted grey in the data canvas.)
    ctx.fillStyle = 'rgba(232, 228, 220, 0.75)'; // the masked grey of the legend, over the weight's colour
    for (let i = 0; i < d.rows; i++) {
      for (let j = 0; j < d.cols; j++) {
        const k = i * d.cols + j;
        const v = d.values[k];
        if (d.forbidden[k] && v !== 0 && !Number.isNaN(v)) ctx.fillRect(j * sx, i * sy, sx, sy);
      }
    }
  }
  if (sx >= 6 && d.forbidden) {
    ctx.strokeStyle = 'rgba(120, 112, 100, 0.55)';
    ctx.lineWidth = Math.max(1, sx / 14);
    ctx.beginPath();
    for (let i = 0; i < d.rows; i++) {
      for (let j = 0; j < d.cols; j++) {
        if (!d.forbidden[i * d.cols + j] || Number.isNaN(d.values[i * d.cols + j])) continue;
        const x = j * sx;
        const y = i * sy;
        for (let f = 1; f <= 2; f++) {
          const a = (f / 3) * sx;
          ctx.moveTo(x + a, y);
          ctx.lineTo(x, y + a * (sy / sx));
          ctx.moveTo(x + sx, y + sy - a * (sy / sx));
          ctx.lineTo(x + sx - a, y + sy);
        }
        ctx.moveTo(x + sx, y);
        ctx.lineTo(x, y + sy);
      }
    }
    ctx.stroke();
  }
  if (sx >= 8) {
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = Math.max(1.5, sx / 10);
    ctx.beginPath();
    for (let k = 0; k < d.rows * d.cols; k++) {
      if (!Number.isNaN(d.values[k])) continue;
      const x = (k % d.cols) * sx;
      const y = Math.floor(k / d.cols) * sy;
      const m = sx * 0.3;
      ctx.moveTo(x + m, y + m);
      ctx.lineTo(x + sx - m, y + sy - m);
      ctx.moveTo(x + sx - m, y + m);
      ctx.lineTo(x + m, y + sy - m);
    }
    ctx.stroke();
  }
}
