// "Open in Heads view" from the Train tab: the trained model's weights in the Heads view, with a
// label, a layer picker and a way back. Ephemeral (not in the link: it cannot carry weights).
import { el, clear } from '../ui/dom';
import type { AttentionResult } from './protocol';
import { tokenLabel, type TrainedAttention } from '../shared/trained-model';

export interface TrainedBanner {
  root: HTMLElement;
  /** Shows the banner for `ta` and returns its current layer as an attention result. */
  show(ta: TrainedAttention): AttentionResult;
  hide(): void;
}

export function createTrainedBanner(on: { layer(l: number): void; back(): void; leave(): void }): TrainedBanner {
  const layer = el('select', { 'data-testid': 'trained-layer', 'aria-label': 'Layer of the trained model' });
  const text = el('span', { 'data-testid': 'trained-text' });
  const back = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'trained-back',
    text: 'Back to Train',
  });
  const leave = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'trained-leave',
    text: 'Show this page’s example instead',
  });
  const root = el(
    'div',
    { class: 'banner trained', role: 'status', 'data-testid': 'trained-banner', hidden: true },
    text,
    el('label', {}, ' Layer ', layer),
    ' ',
    back,
    ' ',
    leave,
    el('p', {
      class: 'muted',
      text: 'Not in the share link: a link cannot carry trained weights. The controls at the side change this page’s example, not the trained model.',
    }),
  );
  layer.addEventListener('change', () => on.layer(Number(layer.value)));
  back.addEventListener('click', () => on.back());
  leave.addEventListener('click', () => on.leave());
  return {
    root,
    show(ta) {
      root.hidden = false;
      clear(layer);
      for (let l = 0; l < ta.layers; l++) layer.append(el('option', { value: String(l), text: String(l + 1) }));
      layer.value = String(ta.layer);
      text.textContent = `Trained model (Train tab, step ${ta.step}), layer ${ta.layer + 1} of ${ta.layers}, every head, on the tokens ${ta.tokens.map(tokenLabel).join(' ')}.${ta.variant ? ` Attention: ${ta.variant}.` : ''} Layers and heads count from 1, as in the lessons.`;
      return trainedResult(ta);
    },
    hide() {
      root.hidden = true;
    },
  };
}

/** One layer of the trained model's weights as an attention result (weights only, causal). */
function trainedResult(ta: TrainedAttention): AttentionResult {
  const T = ta.tokens.length,
    H = ta.heads,
    l = Math.min(ta.layer, ta.layers - 1);
  const allowed = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) allowed[i * T + j] = 1;
  return {
    tokens: ta.tokens.map(tokenLabel),
    t: T,
    tk: T,
    keyTokens: ta.tokens.map(tokenLabel),
    heads: H,
    kvHeads: ta.kvHeads,
    dModel: 0,
    dk: 0,
    dv: 0,
    scale: 0,
    weights: ta.weights.subarray(l * H * T * T, (l + 1) * H * T * T),
    scores: null,
    entropy: new Float32Array(H * T),
    rowSums: null,
    headOutputs: new Float32Array(0),
    merged: new Float32Array(0),
    output: new Float32Array(0),
    allowed,
    nanRowsPerHead: new Array<number>(H).fill(0),
    check: null,
    computeMs: 0,
    source: `Trained model, layer ${l + 1}`,
  };
}
