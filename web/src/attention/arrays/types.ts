// The student's own arrays: the shared result type, the size limits and the one error type every
// reader throws. Pure TypeScript (no DOM); imports nothing from other folders of the page.

/** One array read from text, a file or a link. `data` is row-major (C order) and has exactly
 *  product(shape) elements. */
export interface NdArray {
  /** The name it carried (`W = …`, a JSON key, an .npz entry), if any. */
  name?: string;
  shape: number[];
  data: Float32Array | Float64Array;
  /** Where the values came from: `exact` (binary file, link, JSON of full-precision numbers that
   *  parse back) or `printed` (text whose numbers were rounded when printed). */
  source: 'exact' | 'printed';
  /** For printed text: the rounding step of the print (0.01 for `print(np.round(W, 2))`, 1e-8
   *  for NumPy's default precision, 1e-11 for `[1.234e-08 …]`): each value is within half of it of
   *  the array the student had (see StepTracker in text.ts). 0 for exact sources, except float16
   *  files: 2^-10 (half precision's rounding of values below 2). */
  printStep: number;
}

export const ARRAY_LIMITS = {
  /** Elements in one array (and in all arrays of one paste or file together). */
  maxElements: 1 << 20,
  /** Characters of pasted text or of a .json / .csv file. About 30 characters per number. */
  maxTextLength: 32 << 20,
  /** Bytes of an .npy or .npz file. */
  maxFileBytes: 64 << 20,
  /** Dimensions of one array. */
  maxNdim: 4,
  /** Arrays in one .npz or JSON object. */
  maxArrays: 16,
  /** Characters of one number token (a longer run is refused before any regex sees it). */
  maxNumberLength: 64,
  /** Bytes of an .npy header (NumPy writes 118 for ordinary arrays; it refuses > 10 000 itself). */
  maxNpyHeader: 10_000,
} as const;

/** Every reader, checker and decoder throws this, and nothing else, for bad input. `where` says
 *  the place (e.g. "line 3, column 12", "row 4", "W.npy header") when one is known. */
export class ArrayParseError extends Error {
  readonly where: string | undefined;
  constructor(message: string, where?: string) {
    super(where ? `${where}: ${message}` : message);
    this.name = 'ArrayParseError';
    this.where = where;
  }
}

/** product(shape), refusing shapes that are not lists of non-negative safe integers, have too
 *  many dimensions, or whose product exceeds maxElements (checked step by step: never overflows). */
export function checkedSize(
  shape: readonly number[],
  what = 'the array',
  maxElements: number = ARRAY_LIMITS.maxElements,
): number {
  if (shape.length === 0)
    throw new ArrayParseError(
      `${what} is a scalar (shape ()); an array of 1 to ${ARRAY_LIMITS.maxNdim} dimensions is needed`,
    );
  if (shape.length > ARRAY_LIMITS.maxNdim)
    throw new ArrayParseError(`${what} has ${shape.length} dimensions; at most ${ARRAY_LIMITS.maxNdim} are read`);
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0)
      throw new ArrayParseError(`${what} has an invalid dimension ${String(d)} in its shape`);
    if (d === 0) throw new ArrayParseError(`${what} is empty (shape ${shapeText(shape)})`);
    n *= d;
    if (n > maxElements)
      throw new ArrayParseError(
        `${what} has shape ${shapeText(shape)}: more than the limit of ${maxElements.toLocaleString('en')} elements`,
      );
  }
  return n;
}

/** `(6, 6)` / `(8,)`, as NumPy writes shapes. */
export function shapeText(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** Wrap anything thrown by a library into an ArrayParseError (keeping ours as they are). */
export function asParseError(e: unknown, what: string): ArrayParseError {
  if (e instanceof ArrayParseError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new ArrayParseError(`${what}: ${msg}`);
}
