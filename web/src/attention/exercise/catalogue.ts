// The exercises a teacher can link (docs/exercises.md): each has a fixed id (the link's `ex`), a
// task, hints, the state it starts from and what its check asks of the core's result. The check
// itself is check.ts; the panel is panel.ts. A teacher's own "predict" exercise has no entry here:
// its id names the head and the row (`predict-h2-q8`) and its state is the rest of the link.
// Pure: no DOM, no globals.
//
// Starts are link fields (as the guided path's steps are): the values a link without those keys
// means when it names the exercise (app/state.ts lays them over the fields' defaults), so a
// gallery link is short (`#v=1&ex=fix-nan`) and a student's link keeps what they changed.

/** The mask an exercise asks for, over the tokens the student has. */
export interface MaskTarget {
  causal: boolean;
  window: number;
  /** 'pad-tokens': every token spelled "pad" is padding; else none. */
  padding: 'none' | 'pad-tokens';
}

interface Common {
  id: string;
  title: string;
  /** What the student is asked to do (one or two sentences). */
  task: string;
  hints: string[];
  /** Link fields the exercise starts from (over the defaults). */
  start: Record<string, unknown>;
}
export interface MaskExercise extends Common {
  kind: 'mask';
  target: MaskTarget;
}
export interface FixExercise extends Common {
  kind: 'fix';
  /** Link fields the fix must leave as they start (the check says which changed). */
  keep: string[];
  /** Why the start is broken, said once it is fixed. */
  why: string;
}
export interface PredictExercise extends Common {
  kind: 'predict';
  /** 0-based head and query (the page counts heads from 1). */
  head: number;
  query: number;
}
export interface LineExercise extends Common {
  kind: 'line';
  /** The variant, as link fields (e.g. { posenc: 'rope' }): the lines it changes are the answer,
   *  read from the Lesson view's own code lines (the page's lineQuiz). */
  variant: Record<string, unknown>;
  /** The Lesson view's experiment card that shows the two computations side by side. */
  card: string;
}
/** word → word and position → position (one head); 'previous': layer 2's query word → the word a
 *  key's layer-1 head brought in (build.ts). */
export type GridName = 'word' | 'position' | 'previous';
export interface BuildExercise extends Common {
  kind: 'build';
  /** The sentence the head is built on; the hidden second one uses the same words, as many. */
  sentence: string[];
  hidden: string[];
  /** The grids the student edits (build.ts says what each means). */
  grids: GridName[];
  /** The core's role score that must reach BUILD_PASS on both sentences (for 'induction', of the
   *  second layer's head). */
  role: 'previousToken' | 'duplicateToken' | 'induction';
}
export type Exercise = MaskExercise | FixExercise | PredictExercise | LineExercise | BuildExercise;
export type ExerciseKind = Exercise['kind'];
/** Each kind's name on the page (the panel's heading and the gallery's cards). */
export const KIND_LABEL: Record<ExerciseKind, string> = {
  mask: 'Make the mask',
  fix: 'Fix it',
  predict: 'Predict, then check',
  line: 'Which line?',
  build: 'Build a head',
};

/** A built head passes when its role score reaches this on the shown and on the hidden sentence. */
export const BUILD_PASS = 0.8;

/** A prediction is passed when its total variation distance to the core's row is at most this. */
export const PREDICT_PASS_TV = 0.25;

const LESSON1 = {
  src: 'induction',
  tokens: 'the cat sat on the mat because the cat was tired'.split(' '),
  // Exercises are self-attention: a second sentence for the keys is cleared.
  kvtokens: [] as string[],
};
const LESSON2 = {
  src: 'random',
  gen: 'numpy',
  tokens: ['t0', 't1', 't2', 't3', 't4', 't5'],
  seed: 0,
  heads: 1,
  kv: 1,
  dm: 8,
  dk: 4,
  causal: true,
  kvtokens: [] as string[],
};
const MASK_HINTS = [
  'The mask controls are in the side column: “Causal”, “Window” and the token chips (press one to mark it as padding).',
  'The Mask effect view draws the allowed cells; the check compares them with the target cell by cell.',
];

const mask = (
  id: string,
  title: string,
  task: string,
  target: MaskTarget,
  start: Record<string, unknown>,
  hint?: string,
): MaskExercise => ({
  kind: 'mask',
  id,
  title,
  task,
  hints: hint ? [hint, ...MASK_HINTS] : MASK_HINTS,
  start: { ...LESSON1, causal: false, view: 'mask', ...start },
  target,
});

export const EXERCISES: readonly Exercise[] = [
  mask(
    'mask-causal',
    'Make it causal',
    'Every query attends to every key. Make each query see only itself and the keys before it, as a language model must.',
    { causal: true, window: 0, padding: 'none' },
    {},
  ),
  mask(
    'mask-window3',
    'A sliding window of 3',
    'Make the mask causal, with each query seeing itself and the 2 keys before it (and nothing further back).',
    { causal: true, window: 3, padding: 'none' },
    {},
    'The window counts the query itself: width 3 is itself and two keys back.',
  ),
  mask(
    'mask-diagonal',
    'Only itself',
    'Make each query attend to itself alone. What does every row of weights become?',
    { causal: true, window: 1, padding: 'none' },
    {},
  ),
  mask(
    'mask-pad-end',
    'Padding at the end',
    'The batch padded this sentence with two “pad” tokens. Make the mask causal and keep every query from attending to the padding.',
    { causal: true, window: 0, padding: 'pad-tokens' },
    { tokens: 'the cat sat on the mat pad pad'.split(' ') },
  ),
  mask(
    'mask-window2-pad',
    'A window and padding',
    'Causal, a window of 2 (itself and the key before it), and the two “pad” keys masked.',
    { causal: true, window: 2, padding: 'pad-tokens' },
    { tokens: 'the cat sat on the mat pad pad'.split(' ') },
    'Look at the rows of the “pad” queries: which keys are left to them?',
  ),
  {
    kind: 'fix',
    id: 'fix-nan',
    title: 'Fix the NaN row',
    task: 'The first token is padding, so the causal mask leaves query 0 no key at all and its row comes out NaN. Keep the mask as it is and make every row a real distribution (no NaN, sums to 1).',
    hints: [
      'The mask stays; what is written into the forbidden scores decides what a fully masked row becomes.',
      'Look at the “Fill for forbidden scores” choices in the side column.',
    ],
    start: {
      ...LESSON1,
      tokens: ['pad', ...LESSON1.tokens.slice(1)],
      causal: true,
      pad: [0],
      fill: 'neg_inf',
      view: 'heads',
    },
    keep: ['causal', 'win', 'pad', 'tokens'],
    why: 'With −∞ in every score of a row, softmax computes 0 / 0 = NaN. A finite fill (−1e9) gives a uniform row instead: it sums to 1, but that query now spreads its weight over keys it may not see, padding and future included — a model ignores that row’s output.',
  },
  {
    kind: 'fix',
    id: 'fix-overflow',
    title: 'Fix the float16 overflow',
    task: 'In float16 with the scale removed, exp(score) overflows (float16 stops at 65,504, so any score above about 11.1) and the rows come out NaN. Keep float16 and the scale; make the rows sum to 1 again.',
    hints: [
      'Lesson 1 subtracts something from every score before exp. Is it on here?',
      'The Lesson view’s softmax line has the option; it applies to the Heads view too.',
    ],
    start: { ...LESSON1, causal: true, scale: 'none', prec: 'float16', shift: false, view: 'heads' },
    keep: ['prec', 'scale', 'sharp', 'tokens', 'src'],
    why: 'exp(s − max) ≤ 1 for every score, so nothing overflows; the weights are unchanged because the shift cancels between the numerator and the sum.',
  },
  {
    kind: 'fix',
    id: 'fix-rows',
    title: 'Rows that do not sum to 1',
    task: 'Here the mask zeroes the forbidden weights after the softmax, so the kept weights no longer sum to 1. Keep the causal mask; make every row sum to 1.',
    hints: [
      'Where the mask is applied matters: before the softmax (on the scores) or after it (on the weights).',
      'The Lesson view’s mask line has the choice; it applies to the Heads view too.',
    ],
    start: { ...LESSON1, causal: true, mmode: 'after', view: 'heads' },
    keep: ['causal', 'win', 'pad', 'tokens'],
    why: 'Masking the scores with −∞ before the softmax renormalises over the allowed keys; zeroing weights after it removes probability mass that nothing puts back.',
  },
  {
    kind: 'predict',
    id: 'predict-previous',
    title: 'Predict: the previous-token head',
    task: 'Head 2 of lesson 1’s model, row 8 (the second “cat”). Where does its weight go? Drag the bars, then check.',
    hints: ['Head 2 is built to look one position back.'],
    start: { ...LESSON1, causal: true, view: 'heads', head: 1 },
    head: 1,
    query: 8,
  },
  {
    kind: 'predict',
    id: 'predict-same-token',
    title: 'Predict: the same-token head',
    task: 'Head 1 of lesson 1’s model, row 8 (the second “cat”). Spread 1 over the keys it can see as you think head 1 does.',
    hints: ['Head 1 matches a token with the same word; how many “cat”s can row 8 see?'],
    start: { ...LESSON1, causal: true, view: 'heads', head: 0 },
    head: 0,
    query: 8,
  },
  {
    kind: 'predict',
    id: 'predict-random',
    title: 'Predict: lesson 2’s random head',
    task: 'Lesson 2’s head, every weight drawn from N(0, 1), row 4. Is the row sharp or spread out? Drag the bars.',
    hints: [
      'With N(0, 1) weights and d_model 8, each element of q and k has a variance of about 8, so q·k has a spread of about 16, and about 8 after the √d_k scale: a softmax of scores that far apart is close to one-hot.',
    ],
    start: { ...LESSON2, view: 'heads' },
    head: 0,
    query: 4,
  },
  {
    kind: 'predict',
    id: 'predict-spread',
    title: 'Predict: small random weights',
    task: 'The same head with its weights drawn from N(0, 1/d_model) instead, row 4. Sharp or spread out now?',
    hints: [
      'With N(0, 1/d_model) weights each element of q and k has a variance of about 1, so q·k has a spread of about √d_k = 2, and about 1 after the scale: no key stands far above the rest.',
    ],
    start: { ...LESSON2, init: 'scaled', view: 'heads' },
    head: 0,
    query: 4,
  },
  {
    kind: 'predict',
    id: 'predict-no-scale',
    title: 'Predict: without the √d_k',
    task: 'The small random weights again, row 5, with the scale deleted (scale 1, as lesson 2’s experiment does). Sharper or flatter than with it?',
    hints: ['Without the scale 1/√4 = 1/2 every score doubles: the softmax sharpens.'],
    start: { ...LESSON2, init: 'scaled', scale: 'none', view: 'heads' },
    head: 0,
    query: 5,
  },
  line(
    'line-rope',
    'RoPE',
    { posenc: 'rope' },
    'rope',
    'RoPE rotates each query and key by an angle that grows with its position.',
  ),
  line(
    'line-alibi',
    'ALiBi',
    { posenc: 'alibi' },
    'alibi',
    'ALiBi subtracts a penalty that grows with the distance between query and key.',
  ),
  line(
    'line-qknorm',
    'qk-norm',
    { qkn: true },
    'qknorm',
    'qk-norm scales every query and key to length 1 before the dot product.',
  ),
  line(
    'line-sigmoid',
    'sigmoid attention',
    { norm: 'sigmoid' },
    'sigmoid',
    'Sigmoid attention weighs each key on its own: nothing sums a row to 1. Is there anything left to overflow?',
  ),
  line(
    'line-after',
    'masking after the softmax',
    { mmode: 'after' },
    'after',
    'Here the forbidden weights are set to zero after the normalizer, instead of masking the scores before it.',
  ),
  {
    kind: 'build',
    id: 'build-previous',
    title: 'A previous-token head',
    task: 'Fill in W_Q so that every query attends to the token just before it. Each key is its own position (W_K is the identity); the number in row p, column j is what query position p adds to its score for key position j.',
    hints: [
      'Row p needs a large number in one column. Which one?',
      'How large? The softmax of scores 14 and 0 puts e¹⁴ / (e¹⁴ + n) ≈ 1 on the 14.',
      'The Heads view below shows lesson 1’s head 2, built this way.',
    ],
    start: { ...LESSON1, causal: true, view: 'heads', head: 1 },
    sentence: LESSON1.tokens,
    hidden: 'a dog ran to a tree and then the dog slept'.split(' '),
    grids: ['position'],
    role: 'previousToken',
  },
  {
    kind: 'build',
    id: 'build-same-token',
    title: 'A same-token head that skips itself',
    task: 'Build a head whose queries attend to the earlier copies of their own word, and not to themselves. W_Q has two parts: word → word and position → position; W_K is the identity.',
    hints: [
      'Lesson 1’s head 1 puts a large number on the diagonal of the word part; try it, and read its score.',
      'That head also matches each token with itself: the position part can take that away again.',
    ],
    start: { ...LESSON1, causal: true, view: 'heads', head: 0 },
    sentence: LESSON1.tokens,
    hidden: 'the mat was on the cat because the mat sat tired'.split(' '),
    grids: ['word', 'position'],
    role: 'duplicateToken',
  },
  {
    kind: 'build',
    id: 'build-induction',
    title: 'An induction head, from two layers',
    task: 'Two heads, one after the other. Layer 1: fill in its W_Q (position part) so that it attends to the previous token; its W_V copies that token’s word into a spare part of each vector. Layer 2: fill in its W_Q so that each query looks for keys whose copied previous word is its own word — the token that followed an earlier copy of it. The sentence starts with a start token, <s>, as a model’s input does: the first token has no previous one, and layer 1 copies <s> there.',
    hints: [
      'Layer 1 is the previous-token head of the first build exercise.',
      'Layer 2’s grid: row = the query’s word, column = the previous word a key carries. Which cells say “the same word”?',
      'This is lesson 1’s two-layer composition: the induction head reads what the previous-token head wrote.',
    ],
    start: { ...LESSON1, tokens: ['<s>', ...LESSON1.tokens], causal: true, view: 'heads', head: 0 },
    sentence: ['<s>', ...LESSON1.tokens],
    hidden: '<s> the mat was on the cat because the mat sat tired'.split(' '),
    grids: ['position', 'previous'],
    role: 'induction',
  },
];

function line(id: string, name: string, variant: Record<string, unknown>, card: string, hint: string): LineExercise {
  return {
    kind: 'line',
    id,
    title: name[0].toUpperCase() + name.slice(1),
    task: `Mark every line of the standard computation that ${name} changes, then check. The check shows the two computations side by side.`,
    hints: [hint, 'A variant may change more than one line; mark each one.'],
    start: { ...LESSON1, causal: true, view: 'heads' },
    variant,
    card,
  };
}

const BY_ID = new Map(EXERCISES.map((e) => [e.id, e]));
const TEACHER_PREDICT = /^predict-h([1-9]\d?)-q(\d{1,3})$/;

/** A teacher's predict exercise from its id (head counted from 1, query from 0), or null. */
export function teacherPredict(id: string): { head: number; query: number } | null {
  const m = TEACHER_PREDICT.exec(id);
  return m ? { head: Number(m[1]) - 1, query: Number(m[2]) } : null;
}

/** The id of a teacher's predict exercise on head `head` (0-based) and row `query`. */
export function teacherPredictId(head: number, query: number): string {
  return `predict-h${head + 1}-q${query}`;
}

/** The exercise an id names: a gallery entry, or a teacher's predict (built here), or null. */
export function exerciseOf(id: string): Exercise | null {
  const e = BY_ID.get(id);
  if (e) return e;
  const p = teacherPredict(id);
  if (!p) return null;
  return {
    kind: 'predict',
    id,
    title: `Predict head ${p.head + 1}, row ${p.query}`,
    task: `Where does head ${p.head + 1}’s weight go for query ${p.query}? Drag the bars (they are shared out to sum to 1), then check.`,
    hints: ['Look at the tokens, the mask and what the head was built or trained to do.'],
    start: {},
    head: p.head,
    query: p.query,
  };
}

/** The link fields an exercise starts from (none for a teacher's predict or an unknown id). */
export function exerciseStart(id: unknown): Record<string, unknown> | null {
  return typeof id === 'string' ? (BY_ID.get(id)?.start ?? null) : null;
}

/** Every link key some exercise starts from (app/state.ts gives those rows a link default). */
export const START_KEYS: readonly string[] = [...new Set(EXERCISES.flatMap((e) => Object.keys(e.start)))];
