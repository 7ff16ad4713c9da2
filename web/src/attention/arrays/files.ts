// A dropped file: .npy, .npz, .json, .csv (or any text), told apart by its first bytes and, for
// text, its extension.
import { NPY_MAGIC, readNpy } from './npy';
import { readNpz } from './npz';
import { parseArrayText, parseCsv } from './text';
import { ARRAY_LIMITS, ArrayParseError, type NdArray } from './types';

export type ArrayFileKind = 'npy' | 'npz' | 'csv' | 'text';

/** What a file holds, from its first bytes (binary formats) and its name (text). */
export function fileKind(fileName: string, bytes: Uint8Array): ArrayFileKind {
  if (bytes.length >= 6 && NPY_MAGIC.every((b, i) => bytes[i] === b)) return 'npy';
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5)) return 'npz';
  return /\.(csv|tsv)$/i.test(fileName) ? 'csv' : 'text';
}

/** The arrays in one file. A single .npy / .csv array is named after the file (W.npy → "W") unless
 *  the file names it itself. Throws ArrayParseError, and nothing else. */
export function readArrayFile(fileName: string, bytes: Uint8Array): NdArray[] {
  const label = fileName || 'the file';
  const base = fileName.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '') || undefined;
  try {
    if (bytes.length > ARRAY_LIMITS.maxFileBytes)
      throw new ArrayParseError(
        `${bytes.length.toLocaleString('en')} bytes is more than the limit of ${ARRAY_LIMITS.maxFileBytes.toLocaleString('en')}`,
        label,
      );
    const kind = fileKind(fileName, bytes);
    if (kind === 'npy') {
      const a = readNpy(bytes, label);
      return [base === undefined ? a : { ...a, name: base }];
    }
    if (kind === 'npz') return readNpz(bytes, label);
    if (bytes.length > ARRAY_LIMITS.maxTextLength)
      throw new ArrayParseError(
        `${bytes.length.toLocaleString('en')} bytes of text is more than the limit of ${ARRAY_LIMITS.maxTextLength.toLocaleString('en')}`,
        label,
      );
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new ArrayParseError('neither .npy, .npz nor UTF-8 text', label);
    }
    if (kind === 'csv') return [parseCsv(text, base)];
    const arrays = parseArrayText(text);
    return arrays.length === 1 && arrays[0].name === undefined && base !== undefined
      ? [{ ...arrays[0], name: base }]
      : arrays;
  } catch (e) {
    if (e instanceof ArrayParseError) {
      if (e.message.startsWith(label)) throw e;
      throw new ArrayParseError(e.message, label);
    }
    throw new ArrayParseError(`could not be read (${e instanceof Error ? e.message : String(e)})`, label);
  }
}
