// What every experiment card returns (CardResult) and the words and number format the cards share.
import type { RunModel } from './run';
import type { ExperimentId } from './experiment-ids';
import type { NumpySnippet } from './numpy-snippets';

export interface CardResult {
  id: ExperimentId;
  title: string;
  /** Which line of the computation it replaces or probes. */
  line: string;
  /** One plain sentence first: what the card is about, without symbols. */
  lead?: string;
  /** What the run measured: which heads, which scale, which data. */
  measured?: string;
  /** Sentences with the run's numbers in them. */
  text: string[];
  /** The numbers those sentences state, by name (what the tests check). */
  figures: Record<string, number>;
  /** A table of the run's numbers (the FlashAttention card's bytes per T); `data` holds each row's
   *  exact values for the tests. */
  table?: { caption: string; head: string[]; rows: { cells: string[]; data: Record<string, number> }[] };
  /** "Reproduce in NumPy": lines that give the figures named in its `prints`. */
  numpy?: NumpySnippet;
}

/** The scale as the code line shows it, in words. */
export function scaleWords(scale: RunModel['scale']): string {
  return scale === 'sqrt'
    ? 'scale 1/√d_k'
    : scale === 'none'
      ? 'no scale (scale 1: the division deleted)'
      : `scale ${scale} (instead of 1/√d_k)`;
}

/** Which head a card measured, as the page numbers heads (from 1). */
export function headWords(h: number, heads: number): string {
  return `head ${h + 1} of ${heads} (the head the pictures show)`;
}

/** The drawn head, clamped to the example's heads. */
export const clampHead = (h: number, heads: number) => Math.min(Math.max(0, Math.trunc(h) || 0), heads - 1);

/** The example's name for the "measured" lines. */
export function exampleWords(m: RunModel, t: number): string {
  return m.source === 'induction'
    ? `lesson 1’s example (${t} tokens)`
    : `the random example (seed ${m.seed}, ${t} tokens)`;
}

/** A number as the cards write it (NaN, 0, fixed or exponent form). */
export const f = (x: number, d = 3): string =>
  Number.isNaN(x)
    ? 'NaN'
    : x === 0
      ? '0'
      : Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5
        ? x.toExponential(2)
        : x.toFixed(d);
