// The Text model tab's run state, without DOM: which checkpoint and text the view asked for,
// the model's files (model-files.ts, fetched only once the view opens: model.json, then the
// checkpoint asked for), the forward on the tab's Worker (a TextBackend), and what the panels
// draw from it (tokens, next-token predictions, surprise, the export). One computation at a time:
// a change that arrives meanwhile is computed when it ends (the latest inputs win).
import {
  ModelFileError,
  type CheckpointInfo,
  type ModelFiles,
  type TextModelInfo,
  type TextWeights,
} from './model-files';
import { lastTokens, makeTokenizer, unitWords, type TextTokenizer, type Tokenized, type UnitWords } from './tokenizer';
import { nextLogprobs, topK, type NextToken } from './next';
import type { AblationMeasures, GenOptions, GenRun, ProbeSpec, RoleTable, TextRun } from './runner';
import { headLabel, parseHead } from './state';

/** The tab's computation: the Worker (client.ts), or the runner itself in tests. */
export interface TextBackend {
  load(key: string, config: Record<string, unknown>, weights: TextWeights): Promise<RoleTable>;
  run(key: string, ids: Int32Array, ablated: [number, number][]): Promise<TextRun>;
  generate(key: string, ids: Int32Array, n: number, opts: GenOptions, ablated: [number, number][]): Promise<GenRun>;
  measure(key: string, windows: Int32Array, probe: ProbeSpec, ablated: [number, number][]): Promise<AblationMeasures>;
  /** Start loading the module while the model's files are fetched (optional). */
  warm?(): void;
}

/** "Continue the text" (the link's dlen, temp, topk, topp, sseed). */
export interface GenRequest {
  dlen: number;
  temp: number;
  topk: number;
  topp: number;
  sseed: number;
}

/** The model's continuation of the text. */
export interface Continuation {
  request: GenRequest;
  /** The prompt: the text's last tokens, at most seqLen − 1 (one is left to generate). */
  prompt: string[];
  /** Characters of the text before the prompt (the text was longer than seqLen − 1). */
  promptCut: number;
  /** Characters generated: dlen, or seqLen − prompt length when that is less (`capped`). */
  chars: string[];
  ids: number[];
  capped: boolean;
  /** Per generated token, the 5 most probable next tokens after top-k / top-p. */
  top: { token: string; id: number; p: number }[][];
}

/** The prompt and length of a continuation: the last ≤ seqLen − 1 tokens, n ≤ seqLen − prompt. */
export function continuationPlan(
  all: Tokenized,
  seqLen: number,
  dlen: number,
): { prompt: Tokenized; cut: number; n: number } {
  const { tokens, dropped } = lastTokens(all, seqLen - 1);
  return { prompt: tokens, cut: dropped, n: Math.max(0, Math.min(dlen, seqLen - tokens.ids.length)) };
}

export interface TextInputs {
  text: string;
  /** A checkpoint's step, or −1 for the last. */
  ckpt: number;
  /** 'layer.head', from 1. */
  head: string;
  /** A continuation to generate with the forward, or null. */
  gen?: GenRequest | null;
}

/** What is on screen: one computation's inputs and outputs, all consistent with each other. */
export interface TextResult {
  checkpoint: CheckpointInfo;
  /** Index of the checkpoint in model.json's list. */
  index: number;
  /** The tokens the model read (the text's last seqLen tokens). */
  tokens: Tokenized;
  /** Characters cut from the start of the text (it was longer than seqLen; the text panel says so). */
  dropped: number;
  /** Heads knocked out, [layer, head] from 0, sorted. */
  ablated: [number, number][];
  run: TextRun;
  /** (t − 1) log p of each actual next token; with ablations, the ablated model's. */
  logprobs: Float64Array;
  /** The intact model's, when heads are ablated (else null). */
  intactLogprobs: Float64Array | null;
  /** The continuation asked for (with the same ablations), or null. */
  continuation: Continuation | null;
  /** With heads knocked out: the held-out loss and in-context score, intact and knocked out
   *  (null with none, or when model.json has no held-out windows or probe to measure on). */
  measures: AblationMeasures | null;
}

export type TextStatus =
  { state: 'idle' } | { state: 'busy'; text: string } | { state: 'ready' } | { state: 'error'; text: string };

export type TextChange = 'model' | 'result' | 'status';

export class TextSession {
  info: TextModelInfo | null = null;
  /** How the page names the model's positions (characters or tokens); characters until a model is read. */
  get words(): UnitWords {
    return this.info ? unitWords(this.info.tokenizer) : unitWords({ kind: 'char', symbols: [], unknownId: 0 });
  }
  tokenizer: TextTokenizer | null = null;
  roles: RoleTable | null = null;
  result: TextResult | null = null;
  status: TextStatus = { state: 'idle' };
  /** Sentences about what the computation on screen used instead of what was asked for. */
  private runNotices: string[] = [];
  private want: TextInputs | null = null;
  private ablation = new Set<string>();
  private loadedKey = '';
  /** The held-out windows' ids (tokenized once), and measures by checkpoint and heads knocked
   *  out (they do not depend on the text). */
  private windowIds: Int32Array | null = null;
  private measured = new Map<string, AblationMeasures>();
  private busy = false;
  private dirty = false;

  constructor(
    private readonly files: ModelFiles,
    private readonly backend: TextBackend,
    private readonly onChange: (what: TextChange) => void,
  ) {}

  /** The view's inputs (from the page's state); starts a computation if the text or the
   *  checkpoint changed (the selected head only changes what is drawn). */
  setInputs(i: TextInputs): void {
    const w = this.want;
    const sameGen = JSON.stringify(w?.gen ?? null) === JSON.stringify(i.gen ?? null);
    if (w && w.text === i.text && w.ckpt === i.ckpt && w.head === i.head && sameGen) return;
    this.want = { ...i };
    if (w && w.text === i.text && w.ckpt === i.ckpt && sameGen) this.onChange('result');
    else this.request();
  }

  /** Sentences about what the view uses instead of what the link asked for. */
  get notices(): string[] {
    const c = this.info?.config;
    const h = parseHead(this.want?.head ?? '1.1');
    if (!c || (h.layer < c.layers && h.head < c.heads)) return this.runNotices;
    return [
      ...this.runNotices,
      `This model has ${c.layers} layer${c.layers === 1 ? '' : 's'} of ${c.heads} head${c.heads === 1 ? '' : 's'}: there is no ${headLabel(h.layer, h.head)}; showing L1 H1.`,
    ];
  }

  /** Nothing is computing or waiting: what is on screen answers the latest inputs. */
  get settled(): boolean {
    return !this.busy && !this.dirty;
  }

  get ablated(): [number, number][] {
    return [...this.ablation]
      .map((k) => k.split('.').map(Number) as [number, number])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }

  isAblated(layer: number, head: number): boolean {
    return this.ablation.has(`${layer}.${head}`);
  }

  /** Knock a head out, or put it back; reruns. */
  toggleAblation(layer: number, head: number): void {
    const k = `${layer}.${head}`;
    if (!this.ablation.delete(k)) this.ablation.add(k);
    this.request();
  }

  clearAblations(): void {
    if (this.ablation.size === 0) return;
    this.ablation.clear();
    this.request();
  }

  /** The selected head (0-based), within the model: the link's, or 1.1 with a notice. */
  selectedHead(): { layer: number; head: number } {
    const h = parseHead(this.want?.head ?? '1.1');
    const c = this.info?.config;
    if (c && (h.layer >= c.layers || h.head >= c.heads)) return { layer: 0, head: 0 };
    return h;
  }

  /** The checkpoint an asked step resolves to: −1 = the last; another step not in model.json =
   *  the nearest (the earlier of two as near), with a notice. */
  static resolveStep(cks: readonly CheckpointInfo[], ckpt: number): { index: number; notice: string | null } {
    if (ckpt < 0) return { index: cks.length - 1, notice: null };
    let best = 0;
    for (let i = 1; i < cks.length; i++) if (Math.abs(cks[i].step - ckpt) < Math.abs(cks[best].step - ckpt)) best = i;
    if (cks[best].step === ckpt) return { index: best, notice: null };
    return {
      index: best,
      notice: `The model has no checkpoint at step ${ckpt.toLocaleString('en')}; showing the nearest, step ${cks[best].step.toLocaleString('en')}.`,
    };
  }

  private request(): void {
    if (!this.want) return;
    this.dirty = true;
    if (!this.busy) void this.pump();
  }

  private async pump(): Promise<void> {
    this.busy = true;
    let error: string | null = null;
    while (this.dirty) {
      this.dirty = false;
      try {
        await this.compute({ ...this.want! }, this.ablated);
        error = null;
      } catch (err) {
        // What is on screen stays (it answers its own inputs); the status says what failed. The
        // checkpoint is loaded again next time (the Worker may have been the failure).
        error = describe(err);
        this.loadedKey = '';
      }
    }
    this.busy = false;
    this.setStatus(error === null ? { state: 'ready' } : { state: 'error', text: error });
  }

  private async compute(want: TextInputs, ablated: [number, number][]): Promise<void> {
    if (!this.info) {
      this.backend.warm?.();
      this.setStatus({ state: 'busy', text: 'Loading the model’s description (model.json)…' });
      this.info = await this.files.model();
      this.tokenizer = makeTokenizer(this.info.tokenizer);
      this.onChange('model');
    }
    const info = this.info;
    const { index, notice } = TextSession.resolveStep(info.checkpoints, want.ckpt);
    const notices = notice ? [notice] : [];
    const ck = info.checkpoints[index];
    const key = `${ck.step}`;
    if (this.loadedKey !== key) {
      this.setStatus({ state: 'busy', text: `Loading checkpoint ${ck.file}…` });
      const weights = await this.files.checkpoint(ck.step);
      this.loadedKey = '';
      this.roles = await this.backend.load(key, info.trainerConfig, weights);
      this.loadedKey = key;
    }
    const all = this.tokenizer!.encode(want.text);
    const { tokens, dropped } = lastTokens(all, info.config.seqLen);
    this.runNotices = notices;
    if (tokens.ids.length === 0) {
      this.result = null;
      this.onChange('result');
      return;
    }
    this.setStatus({ state: 'busy', text: `Running checkpoint ${ck.step.toLocaleString('en')} on the text…` });
    const run = await this.backend.run(key, tokens.ids, ablated);
    const V = info.config.vocab;
    let continuation: Continuation | null = null;
    if (want.gen) {
      const g = want.gen;
      const plan = continuationPlan(all, info.config.seqLen, g.dlen);
      this.setStatus({ state: 'busy', text: `Continuing the text (${plan.n} ${this.words.many})…` });
      const opts = { temperature: g.temp, topK: g.topk, topP: g.topp, seed: g.sseed };
      const gen = await this.backend.generate(key, plan.prompt.ids, plan.n, opts, ablated);
      const k = Math.min(5, V);
      const ids = Array.from(gen.tokens);
      continuation = {
        request: { ...g },
        prompt: plan.prompt.chars,
        promptCut: plan.cut,
        chars: ids.map((id) => this.tokenizer!.symbol(id)),
        ids,
        capped: plan.n < g.dlen,
        top: ids.map((_, i) =>
          Array.from({ length: k }, (_, r) => {
            const id = gen.topIds[i * k + r];
            return { token: this.tokenizer!.symbol(id), id, p: gen.topProbs[i * k + r] };
          }),
        ),
      };
    }
    let measures: AblationMeasures | null = null;
    const windows = info.heldOutWindowIds ?? info.heldOutWindows;
    if (ablated.length > 0 && windows && info.probe) {
      const mkey = `${key}|${ablated.map(([l, h]) => `${l}.${h}`).join(',')}`;
      measures = this.measured.get(mkey) ?? null;
      if (!measures) {
        this.setStatus({
          state: 'busy',
          text: `Measuring the knock-out on ${windows.length} held-out windows and ${info.probe.rows} probe rows…`,
        });
        this.windowIds ??= Int32Array.from(
          info.heldOutWindowIds
            ? info.heldOutWindowIds.flat()
            : (info.heldOutWindows ?? []).flatMap((w) => Array.from(this.tokenizer!.encode(w).ids)),
        );
        measures = await this.backend.measure(key, this.windowIds, info.probe, ablated);
        if (this.measured.size >= 64) this.measured.clear();
        this.measured.set(mkey, measures);
      }
    }
    this.result = {
      measures,
      continuation,
      checkpoint: ck,
      index,
      tokens,
      dropped,
      ablated,
      run,
      logprobs: nextLogprobs(run.logits, tokens.ids, V),
      intactLogprobs: run.intactLogits ? nextLogprobs(run.intactLogits, tokens.ids, V) : null,
    };
    this.onChange('result');
  }

  private setStatus(s: TextStatus): void {
    this.status = s;
    this.onChange('status');
  }

  /** Top-k next tokens after position i of the result on screen. */
  next(i: number, k = 5): (NextToken & { token: string })[] {
    const r = this.result;
    if (!r || !this.info || i < 0 || i >= r.tokens.ids.length) return [];
    return topK(r.run.logits, i, this.info.config.vocab, k).map((n) => ({ ...n, token: this.tokenizer!.symbol(n.id) }));
  }

  /** The JSON export of what is on screen (docs: the Text model view). Indices from 0. */
  exportData(): TextExport | null {
    const r = this.result;
    const info = this.info;
    if (!r || !info) return null;
    const { layers: L, heads: H } = info.config;
    const t = r.tokens.ids.length;
    const w = r.run.weights;
    const s = r.run.scores;
    return {
      text: r.tokens.chars.join(''),
      droppedChars: r.dropped,
      tokens: [...r.tokens.chars],
      ids: Array.from(r.tokens.ids),
      checkpoint: r.checkpoint.step,
      ablated: r.ablated.map(([l, h]) => [l, h]),
      layers: Array.from({ length: L }, (_, l) => ({
        heads: Array.from({ length: H }, (_, h) => {
          const k = l * H + h;
          const base = k * t * t;
          return {
            weights: Array.from({ length: t }, (_, i) => Array.from(w.subarray(base + i * t, base + (i + 1) * t))),
            role: s ? s.roles[k] : null,
            scores: s
              ? { previous: s.previous[k], induction: s.induction[k], duplicate: s.duplicate[k], first: s.first[k] }
              : null,
          };
        }),
      })),
      next: Array.from({ length: t }, (_, i) => this.next(i, 5)),
      logprobs: Array.from(r.logprobs),
      generated: r.continuation ? r.continuation.chars.join('') : null,
      knockout: r.measures
        ? {
            heldOutLoss: { intact: r.measures.intact.heldOutLoss, knockedOut: r.measures.ablated.heldOutLoss },
            inContext: { intact: r.measures.intact.inContext, knockedOut: r.measures.ablated.inContext },
            windows: r.measures.windows,
            probeRows: r.measures.probeRows,
          }
        : null,
    };
  }
}

export interface TextExport {
  /** The tokens the model read. */
  text: string;
  /** Characters of the typed text before them that the model did not read. */
  droppedChars: number;
  tokens: string[];
  ids: number[];
  /** The checkpoint's step. */
  checkpoint: number;
  /** Heads knocked out, [layer, head] from 0. */
  ablated: number[][];
  layers: {
    heads: {
      /** (t, t): query row, key column. */
      weights: number[][];
      role: string | null;
      scores: { previous: number; induction: number; duplicate: number; first: number } | null;
    }[];
  }[];
  /** Per position: the 5 most probable next tokens, most probable first. */
  next: { token: string; id: number; p: number }[][];
  /** log p of each token after the first (natural log). */
  logprobs: number[];
  /** "Continue the text": the generated tokens, or null when none was asked for. */
  generated: string | null;
  /** With heads knocked out: held-out loss (nats/char, on `windows` held-out windows) and the
   *  probe's in-context score (on `probeRows` rows), intact and knocked out; else null. */
  knockout: {
    heldOutLoss: { intact: number; knockedOut: number };
    inContext: { intact: number; knockedOut: number };
    windows: number;
    probeRows: number;
  } | null;
}

function describe(err: unknown): string {
  if (err instanceof ModelFileError) return `The model’s files could not be used: ${err.message}`;
  const e = err as { message?: string; field?: string | null };
  const field = typeof e?.field === 'string' && e.field ? ` (field ${e.field})` : '';
  return `The text model could not run${field}: ${String(e?.message ?? err)}`;
}
