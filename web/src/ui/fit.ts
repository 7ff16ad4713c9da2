// Fit mode (?embed=1&fit=1): a view's pictures shrink until the page fits the frame's height.

/** True when the document ends inside the window (nothing to scroll vertically). */
export function pageFits(): boolean {
  return document.documentElement.getBoundingClientRect().height <= window.innerHeight + 1;
}

/**
 * Draws at scale 1 and, when the page then runs past the window, searches (bisection, six
 * layouts) for the largest scale in [min, 1] at which it fits, and draws at that. The labels'
 * size follows the cells, so the page height is not a simple function of the scale: measuring
 * each candidate is what makes the answer right. Returns the scale drawn last.
 */
export function drawToFit(draw: (scale: number) => void, min = 0.15): number {
  draw(1);
  if (pageFits()) return 1;
  let lo = min;
  let hi = 1;
  for (let i = 0; i < 6; i++) {
    const mid = (lo + hi) / 2;
    draw(mid);
    if (pageFits()) lo = mid;
    else hi = mid;
  }
  draw(lo);
  return lo;
}
