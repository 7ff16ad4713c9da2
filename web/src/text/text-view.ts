// The Text model tab: a model trained by this project's own trainer on State of the
// Union addresses (docs/text-model.md) reads the student's text. Every head's map, role and
// scores on that text, what the model predicts next at each token and how surprised it was,
// heads knocked out, and the checkpoints of its training. The model's files are fetched when the
// view first opens (model.json, then the checkpoint shown). The view composes the run state
// (session.ts, no DOM) and its panels (text-panel.ts, grid-panel.ts, history-panel.ts), and owns
// the notices, the model's description and the export.
import './text.css';
import { clear, el, fmt } from '../ui/dom';
import { download } from '../shared/export';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { ModelFiles, httpSource } from './model-files';
import { TextSession, type TextChange } from './session';
import { TextClient } from './client';
import { headText, type TextSlice, type TextState } from './state';
import { TextPanel } from './text-panel';
import { GridPanel } from './grid-panel';
import { HistoryPanel } from './history-panel';
import { ContinuePanel } from './continue-panel';

/** Where the shipped model lives, relative to the page. */
export const TEXT_MODEL_URL = 'models/sotu-bpe/';

/** What the page gives the Text model tab: its settings and a way to change them. */
export type TextContext = LabContext<TextSlice, { text?: Partial<TextState> }>;

declare global {
  interface Window {
    /** For tests and scripts: the export of what the Text model tab shows, or null. */
    __textModel?: { export: () => unknown; settled: () => boolean };
  }
}

class TextView implements View<TextContext> {
  readonly id = 'text';
  readonly root: HTMLElement;
  private ctx: TextContext | null = null;
  private session: TextSession | null = null;
  private text: TextPanel | null = null;
  private grid: GridPanel | null = null;
  private history: HistoryPanel | null = null;
  private cont: ContinuePanel | null = null;
  private readonly status = el('p', { class: 'tx-status', role: 'status', 'data-testid': 'text-status' });
  private readonly notices = el('ul', { class: 'tx-notices', 'data-testid': 'text-notices', hidden: true });
  private readonly note = el('aside', { class: 'tx-note', 'data-testid': 'text-shipped-note', hidden: true });
  private readonly about = el('p', { class: 'lead tx-about', 'data-testid': 'text-model-about' });
  private readonly title = el('h3', {
    class: 'panel-title',
    text: 'Text model: a transformer trained on real text reads your text',
  });
  private readonly body = el('div', { class: 'tx-body' });
  private readonly rolesText = el('span', { 'data-testid': 'text-role-rule' });
  private raf = 0;
  private drawnResult: unknown = null;

  constructor() {
    const exportBtn = el('button', {
      type: 'button',
      class: 'btn small',
      'data-testid': 'text-export-json',
      text: 'Export JSON',
    });
    exportBtn.addEventListener('click', () => {
      const d = this.session?.exportData();
      if (d) download(`text-model-step-${d.checkpoint}.json`, JSON.stringify(d), 'application/json');
    });
    this.root = el(
      'div',
      { class: 'view-text', 'data-testid': 'text-view', 'data-status': 'idle' },
      el(
        'div',
        { class: 'tx-head' },
        this.title,
        this.about,
        el('div', { class: 'tx-export' }, el('span', { class: 'export-title', text: 'Export' }), exportBtn),
      ),
      this.note,
      this.notices,
      this.status,
      this.body,
      definitions(this.rolesText),
    );
  }

  heatmaps() {
    return this.grid ? [{ name: 'text-head', heatmap: this.grid.zoom }] : [];
  }

  render(ctx: TextContext): void {
    this.ctx = ctx;
    if (!this.session) this.start();
    this.text!.setText(ctx.state.text.text);
    const t = ctx.state.text;
    const gen = t.tgen ? { dlen: t.dlen, temp: t.temp, topk: t.topk, topp: t.topp, sseed: t.sseed } : null;
    this.session!.setInputs({ text: t.text, ckpt: t.ckpt, head: t.head, gen });
    this.schedule();
  }

  /** The first render: make the session (this fetches model.json) and the panels. */
  private start(): void {
    const files = new ModelFiles(httpSource(new URL(TEXT_MODEL_URL, document.baseURI).href));
    const s = (this.session = new TextSession(files, new TextClient(), (w) => this.changed(w)));
    const update = (p: Partial<TextState>) => this.ctx?.update({ text: p });
    this.text = new TextPanel(s, { setText: (text) => update({ text }) });
    this.grid = new GridPanel(s, {
      select: (l, h) => update({ head: headText(l, h) }),
      toggle: (l, h) => {
        s.toggleAblation(l, h);
        this.ctx?.announce(`${s.isAblated(l, h) ? 'Knocked out' : 'Put back'} L${l + 1} H${h + 1}`);
      },
      readout: (t) => this.ctx?.announce(t),
    });
    this.history = new HistoryPanel(s, {
      pick: (i) => {
        const cks = s.info?.checkpoints;
        if (cks) update({ ckpt: i === cks.length - 1 ? -1 : cks[i].step });
      },
    });
    this.cont = new ContinuePanel(s, { update });
    this.body.append(
      el('div', { class: 'tx-cols' }, this.text.root, this.history.root),
      this.cont.root,
      this.grid.root,
    );
    window.__textModel = { export: () => s.exportData(), settled: () => s.settled };
  }

  private changed(what: TextChange): void {
    if (what !== 'status') this.schedule();
    else if (this.session!.status.state === 'busy') this.drawStatus();
    else this.schedule(); // ready or failed: everything is drawn again
  }

  private schedule(): void {
    if (this.raf) return;
    this.raf = requestAnimationFrame(() => {
      this.raf = 0;
      this.draw();
    });
  }

  private drawStatus(): void {
    const st = this.session!.status;
    this.root.dataset.status = this.session!.settled && st.state === 'ready' ? 'ready' : st.state;
    this.status.textContent = st.state === 'busy' || st.state === 'error' ? st.text : '';
    this.status.classList.toggle('tx-error', st.state === 'error');
  }

  private draw(): void {
    const s = this.session!;
    const info = s.info;
    this.drawStatus();
    clear(this.notices);
    for (const n of s.notices) this.notices.append(el('li', { text: n }));
    this.notices.hidden = s.notices.length === 0;
    if (!info) return;
    const roles = s.roles;
    this.rolesText.textContent = roles
      ? `the score with the largest value among the four, if it is at least ${roles.threshold}; else “mixed”. The names (${roles.names.join(', ')}) and the threshold are the core’s (the training module’s headRoles).`
      : 'the score with the largest value among the four, if it reaches the core’s threshold; else “mixed”.';
    const missed = info.targets.filter((t) => !t.met);
    this.note.hidden = !info.shippedNote && missed.length === 0;
    clear(this.note);
    if (info.shippedNote) this.note.append(el('strong', { text: 'What this model misses: ' }), info.shippedNote);
    if (missed.length) {
      const last = info.checkpoints[info.checkpoints.length - 1];
      this.note.append(
        el('p', {
          text: `This model misses ${missed.length} of the ${info.targets.length} targets set for it (the trainer's own figures at its last checkpoint, step ${last.step.toLocaleString('en')}; met: ${
            info.targets
              .filter((t) => t.met)
              .map((t) => t.want)
              .join('; ') || 'none'
          }):`,
        }),
        el(
          'ul',
          { 'data-testid': 'text-targets-missed' },
          ...missed.map((t) =>
            el('li', {
              'data-name': t.name,
              text: `${t.want}: ${t.got === null ? 'never reached' : `measured ${fmt(t.got, 3)}`}`,
            }),
          ),
        ),
      );
    }
    const c = info.config;
    const w = s.words;
    this.title.textContent = `Text model: a ${info.tokenizer.kind === 'char' ? 'character-level' : 'subword'} transformer reads your text`;
    const r = s.result;
    const corpus = info.corpus
      ? ` on ${info.corpus.package} ${info.corpus.version} (training split: ${info.corpus.train}; held-out: ${info.corpus.heldOut})`
      : '';
    const ck = r?.checkpoint;
    this.about.textContent =
      `The model reads ${w.how} and sees at most ${c.seqLen} ${w.many}: ${c.layers} layer${c.layers === 1 ? '' : 's'} of ${c.heads} attention head${c.heads === 1 ? '' : 's'}, d_model ${c.dModel}, no MLP, trained by this project's own trainer${corpus}.` +
      (info.repeat
        ? ` Not pure text: in ${fmt(info.repeat * 100, 0)} % of its training rows the last m ${w.many} (m from ${Math.max(4, Math.floor(c.seqLen / 8))} to ${Math.floor(c.seqLen / 2)}) repeated the m before them, to invite induction heads.`
        : '') +
      (ck
        ? ` Shown: checkpoint step ${ck.step.toLocaleString('en')} (${ck.tokens.toLocaleString('en')} training tokens)${ck.heldOutLoss === null ? '' : `, held-out loss ${fmt(ck.heldOutLoss, 3)} nats per ${w.one}`}.`
        : '');
    this.root.dataset.step = ck ? String(ck.step) : '';
    this.root.dataset.tokens = r ? String(r.tokens.ids.length) : '0';
    const width = this.ctx?.width ?? 600;
    // The characters' cells are made again only for a new result (a rebuild loses focus and hover).
    if (r !== this.drawnResult || !r) this.text!.draw();
    this.drawnResult = r;
    const asked = TextSession.resolveStep(info.checkpoints, this.ctx?.state.text.ckpt ?? -1).index;
    this.history!.draw(asked, r ? r.index : asked);
    this.grid!.draw(width);
    if (this.ctx) this.cont!.draw(this.ctx.state.text);
  }
}

/** What the scores and roles mean (the core's definitions: docs/train-api.md, "The text model's probe"). */
function definitions(roleRule: HTMLElement): HTMLElement {
  const item = (term: string, text: string | HTMLElement) => el('li', {}, el('strong', { text: `${term}: ` }), text);
  return el(
    'details',
    { class: 'tx-panel tx-defs', 'data-testid': 'text-definitions' },
    el('summary', { text: 'What the scores and roles mean' }),
    el(
      'ul',
      {},
      item('previous', 'the mean weight from each character (from the second on) to the one just before it.'),
      item(
        'induction',
        'for each character seen earlier in the text, the summed weight on the characters that came right after its earlier occurrences (except the one just before it), averaged over such characters; 0 if there is none.',
      ),
      item(
        'duplicate',
        'for each character seen earlier, the summed weight on its earlier occurrences, averaged over such characters; 0 if there is none.',
      ),
      item('first', 'the mean weight from each character (from the second on) to the first one.'),
      item('role', roleRule),
      item(
        'probe',
        'rows of random training characters repeated once, [r, r], scored by the trainer at each checkpoint: induction = mean weight from a character of the second copy to the one after its first occurrence, previous = mean weight to the character before (model.json).',
      ),
    ),
    el('p', {
      class: 'muted',
      text: 'Layers and heads count from 1 on the page (L1 H1); the JSON export indexes them from 0. Definitions in full: docs/train-api.md (“The text model’s probe”) and docs/text-model.md in the project’s repository.',
    }),
  );
}

export const textView: ViewFactory<TextContext, 'text', false> = {
  id: 'text',
  label: 'Text',
  needsResult: false,
  create: () => new TextView(),
};
