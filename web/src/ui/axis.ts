// Axis helpers shared by the heatmaps and the bar charts: how wide the token labels are, and
// which round step thins them.

/** About how wide a labelled heatmap's row labels are for these tokens (CSS px, at most 140):
 *  what a view leaves beside the picture when it fits one to its width. */
export function rowLabelWidth(tokens: string[]): number {
  return Math.min(140, 24 + 8 * Math.max(1, ...tokens.map((t) => Array.from(t).length)));
}

/** The smallest of 1, 2, 5, 10, 20, 25, 50, 100, … that is ≥ n. */
export function niceStep(n: number): number {
  if (n <= 1) return 1;
  for (let p = 1; ; p *= 10) {
    for (const m of [1, 2, 2.5, 5]) {
      const k = m * p;
      if (Number.isInteger(k) && k >= n) return k;
    }
  }
}
