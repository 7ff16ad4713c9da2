// The text model's forward, on the training module (attn_train): one trainer per checkpoint,
// made with the checkpoint's weights, asked for the attention maps and logits of a text
// (tr.attention) and every head's scores and role on it (tr.textScores: the core's definitions
// and role rule, never re-implemented here). Used by the tab's Worker (worker.ts) and, as is, by
// the tests under Node. No DOM.
import type { AttnTrainLib, AttnTrainer } from '../wasm/load-train';
import type { TextWeights } from './model-files';

/** Every head's scores on the text (index l·H + h) and its role. */
export interface HeadScoresOnText {
  previous: Float64Array;
  induction: Float64Array;
  duplicate: Float64Array;
  first: Float64Array;
  roles: string[];
}

export interface TextRun {
  /** (L, H, t, t) attention weights, with the ablated heads knocked out. */
  weights: Float32Array;
  /** (t, V) logits of the next token at every position, with the ablations. */
  logits: Float32Array;
  /** null for a text of one token (the scores need two). */
  scores: HeadScoresOnText | null;
  /** (t, V) the intact model's logits, when some head is ablated (else null). */
  intactLogits: Float32Array | null;
}

/** Sampling settings of tr.generate: temperature 0 = greedy; topK 0 and topP 1 = off. */
export interface GenOptions {
  temperature: number;
  topK: number;
  topP: number;
  seed: number;
}

/** n generated tokens and, per step, the min(5, V) most probable next tokens with their
 *  probabilities after topK / topP ((n, min(5, V)) row-major; greedy: the plain softmax). */
export interface GenRun {
  tokens: Int32Array;
  topIds: Int32Array;
  topProbs: Float32Array;
}

/** The text model's two measures (the core's tr.textLoss and tr.probeScores). */
export interface TextMeasures {
  /** Mean next-token cross-entropy (nats) over the held-out windows. */
  heldOutLoss: number;
  /** The probe's in-context score (nats): second copy's loss minus the first's. */
  inContext: number;
}

/** What a knock-out changes: the measures of the intact model and with the heads knocked out. */
export interface AblationMeasures {
  intact: TextMeasures;
  ablated: TextMeasures;
  /** Held-out windows and probe rows measured on. */
  windows: number;
  probeRows: number;
}

/** How to draw the probe (model.json's probe). */
export interface ProbeSpec {
  rows: number;
  seed: number;
  candidateIds: number[];
}

/** The core's role names and the score a role needs (lib.headRoles). */
export interface RoleTable {
  names: string[];
  threshold: number;
}

export class TextRunner {
  private tr: AttnTrainer | null = null;
  private heads = 0;
  /** The loaded checkpoint's probe tokens and intact measures: computed by the first measure()
   *  on it, so each further knock-out runs only its own pass. The windows and the probe come
   *  from model.json, the same for every call of a model (`key` guards against another). */
  private intact: { key: string; probe: Int32Array; measures: TextMeasures } | null = null;

  constructor(private readonly lib: AttnTrainLib) {}

  roles(): RoleTable {
    const r = this.lib.headRoles;
    return { names: [...r.names], threshold: r.threshold };
  }

  /** A trainer holding these weights (the previous one is freed). Throws the module's AttnError
   *  (its `field` names the part) when the config or a weight is refused. */
  load(config: Record<string, unknown>, weights: TextWeights): void {
    this.free();
    // batch 1: the trainer's memory estimate counts a training batch that is never drawn here.
    this.tr = this.lib.createTrainer({ ...config, batch: 1, task: 'random', weights });
    this.heads = Number(this.tr.config.heads);
  }

  /** The forward of `ids` (1 … seqLen tokens) with the heads in `ablated` ([layer, head], from 0)
   *  knocked out. The trainer's ablations are cleared again afterwards. */
  run(ids: Int32Array, ablated: readonly (readonly [number, number])[]): TextRun {
    const tr = this.tr;
    if (!tr) throw new Error('no checkpoint is loaded');
    const intact = ablated.length > 0 ? tr.attention(ids).logits : null;
    try {
      for (const [l, h] of ablated) tr.setAblation(l, h, true);
      const a = tr.attention(ids);
      const scores = ids.length >= 2 ? tr.textScores(ids) : null;
      return { weights: a.weights, logits: a.logits, scores, intactLogits: intact };
    } finally {
      for (const [l, h] of ablated) tr.setAblation(l, h, false);
    }
  }

  /** Held-out loss on `windows` ((W, seqLen) ids, row-major) and the probe's in-context score,
   *  intact and with the heads in `ablated` knocked out (at least one). The probe is drawn by
   *  the core (tr.makeProbe) as the trainer drew it. */
  measure(windows: Int32Array, probe: ProbeSpec, ablated: readonly (readonly [number, number])[]): AblationMeasures {
    const tr = this.tr;
    if (!tr) throw new Error('no checkpoint is loaded');
    if (ablated.length === 0) throw new Error('measure: no head is knocked out');
    const both = (tokens: Int32Array): TextMeasures => ({
      heldOutLoss: tr.textLoss(windows),
      inContext: tr.probeScores(tokens).inContext,
    });
    const key = `${windows.length} ${windows[0]} ${windows[windows.length - 1]} ${probe.rows} ${probe.seed} ${probe.candidateIds.join(',')}`;
    if (this.intact?.key !== key) {
      const tokens = tr.makeProbe(probe.candidateIds, probe.rows, probe.seed);
      this.intact = { key, probe: tokens, measures: both(tokens) };
    }
    const { probe: tokens, measures: intact } = this.intact;
    try {
      for (const [l, h] of ablated) tr.setAblation(l, h, true);
      const knocked = both(tokens);
      return { intact, ablated: knocked, windows: windows.length / Number(tr.config.seqLen), probeRows: probe.rows };
    } finally {
      for (const [l, h] of ablated) tr.setAblation(l, h, false);
    }
  }

  /** n tokens after `ids` (tr.generate, cached decoding), with the heads in `ablated` knocked out. */
  generate(ids: Int32Array, n: number, o: GenOptions, ablated: readonly (readonly [number, number])[]): GenRun {
    const tr = this.tr;
    if (!tr) throw new Error('no checkpoint is loaded');
    try {
      for (const [l, h] of ablated) tr.setAblation(l, h, true);
      return tr.generate(ids, n, { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed });
    } finally {
      for (const [l, h] of ablated) tr.setAblation(l, h, false);
    }
  }

  get loaded(): boolean {
    return this.tr !== null && this.heads > 0;
  }

  free(): void {
    this.tr?.delete();
    this.tr = null;
    this.heads = 0;
    this.intact = null;
  }
}
