// The sentences under the map of queries and keys, from the core's figures (map.ts). Pure: no DOM.
import { fmt, tokenRef } from '../ui/dom';
import type { HeadMap } from './map';

export const pct = (x: number) => `${(100 * x).toFixed(0)}\u00a0%`;

/** What the map shows: exact (d_k ≤ 2) or how much of the vectors' squared length its two axes
 *  hold; the keys' drawing factor when there is one. */
export function infoText(map: HeadMap, t: number, keyScale: number, picked: boolean, tk = t): string {
  let s = map.exact
    ? `d_k = ${map.dk}: the map is exact (x = dimension 0${map.dk === 2 ? ', y = dimension 1' : '; every vector is on one line'}). Queries are dots, keys squares.`
    : `The head’s ${t} queries (dots) and ${tk} keys (squares), as the score uses them, on the two directions that hold most of their squared length: ${pct(map.explained[0])} and ${pct(map.explained[1])} of it (${pct(map.explained[0] + map.explained[1])} shown; the rest is lost, so lengths and angles are approximate). Not centred: the origin is the zero vector, so a query points towards the keys it scores highly.`;
  if (keyScale !== 1)
    s += ` The keys are drawn ${fmt(keyScale, 1)} times ${keyScale > 1 ? 'longer' : 'shorter'} than they are, so both kinds fit; their directions are as mapped.`;
  if (!picked) s += ' Pick a query (a dot, or a row’s cell) to colour the keys by its weights.';
  return s;
}

/** The spread of q·k on the head's pairs against one dimension's product, the scale's effect,
 *  and the picked query's top weight with (and, when given, without) the scale. */
export function spreadText(
  map: HeadMap,
  t: number,
  scaled: ArrayLike<number>,
  plain: ArrayLike<number> | null,
  q: number | null,
  tokens: readonly string[],
  tk = t,
  keyTokens: readonly string[] = tokens,
): string {
  const ratio = map.prodStd > 0 ? map.dotStd / map.prodStd : NaN;
  let s =
    `Spread of q·k over the head’s ${t}×${tk} query–key pairs: standard deviation ${fmt(map.dotStd, 2)}; ` +
    `of one dimension’s product q_c·k_c: ${fmt(map.prodStd, 2)}. The sum of ${map.dk} products spreads ${fmt(ratio, 1)} times wider` +
    ` (√d_k = ${fmt(Math.sqrt(map.dk), 1)} for independent, zero-mean products). The scale ${fmt(map.scale, 3)} brings the spread of scale × q·k to ${fmt(map.dotStd * map.scale, 2)}.`;
  if (q === null) return s;
  const top = (w: ArrayLike<number>) => {
    let b = 0;
    for (let j = 1; j < tk; j++) if (w[q * tk + j] > w[q * tk + b]) b = j;
    return { b, w: w[q * tk + b] };
  };
  const a = top(scaled);
  s += ` Query ${tokenRef(tokens, q)}: top weight ${fmt(a.w)} on ${tokenRef(keyTokens, a.b)} with the scale`;
  if (!plain) return s + '.';
  const u = top(plain);
  return s + `, ${fmt(u.w)} on ${tokenRef(keyTokens, u.b)} without it (the map’s colours).`;
}

/** The d_k = 2 playground's line: how to move a vector, or why it cannot be moved. */
export function playText(dk: number, draggable: boolean): string {
  if (dk !== 2) return '';
  return draggable
    ? 'd_k = 2: drag a dot or a square (or focus the map and press Shift+arrows) to move that vector; the weights follow. A what-if: the model is unchanged.'
    : 'd_k = 2, but qk-norm, RoPE or linear attention transforms the vectors before the score: turn them off to drag the vectors themselves.';
}
