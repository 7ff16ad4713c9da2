// .npz files: a zip of .npy entries. np.savez stores them uncompressed, np.savez_compressed
// deflates them. Unzipping is fflate's (npm, pinned; small, no dependencies, ESM, synchronous), each
// entry is then read by readNpy. Before fflate sees the bytes we check the end-of-central-directory
// record ourselves (entry count, no ZIP64), so a hostile file cannot make it loop over billions of
// entries, and the filter refuses any entry whose declared size breaks the cap before it is
// inflated (fflate inflates into a buffer of exactly the declared size, never more).
import { unzipSync } from 'fflate';
import { readNpy } from './npy';
import { ARRAY_LIMITS, ArrayParseError, asParseError, type NdArray } from './types';

const EOCD = 0x06054b50;

/** Read every array of an .npz file, named after its entries (W.npy → "W"). */
export function readNpz(bytes: Uint8Array, label = 'the .npz file'): NdArray[] {
  if (bytes.length > ARRAY_LIMITS.maxFileBytes)
    throw new ArrayParseError(
      `${bytes.length.toLocaleString('en')} bytes is more than the limit of ${ARRAY_LIMITS.maxFileBytes.toLocaleString('en')}`,
      label,
    );
  if (bytes.length < 22) throw new ArrayParseError('not a zip (.npz) file: too short', label);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record is in the last 22 + 65535 bytes.
  let e = bytes.length - 22;
  const stop = Math.max(0, bytes.length - 22 - 0xffff);
  while (e >= stop && view.getUint32(e, true) !== EOCD) e--;
  if (e < stop) throw new ArrayParseError('not a zip (.npz) file: no end-of-central-directory record', label);
  const entries = view.getUint16(e + 10, true);
  const cdSize = view.getUint32(e + 12, true);
  const cdOffset = view.getUint32(e + 16, true);
  if (entries === 0xffff || cdOffset === 0xffffffff || cdSize === 0xffffffff)
    throw new ArrayParseError(
      'ZIP64 archives are not read (an .npz of arrays within the size limit never needs it)',
      label,
    );
  if (entries === 0) throw new ArrayParseError('the .npz file holds no arrays', label);
  if (entries > ARRAY_LIMITS.maxArrays)
    throw new ArrayParseError(
      `the .npz file holds ${entries} entries; at most ${ARRAY_LIMITS.maxArrays} are read`,
      label,
    );
  if (cdOffset + cdSize > e || cdSize < entries * 46)
    throw new ArrayParseError('the zip directory is corrupt (it points outside the file)', label);

  let declared = 0;
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, {
      filter(f) {
        if (!f.name.endsWith('.npy')) return false;
        declared += f.originalSize;
        if (f.originalSize > ARRAY_LIMITS.maxFileBytes || declared > ARRAY_LIMITS.maxFileBytes)
          throw new ArrayParseError(
            `entry “${f.name}” unpacks to ${f.originalSize.toLocaleString('en')} bytes; the limit for all entries is ${ARRAY_LIMITS.maxFileBytes.toLocaleString('en')}`,
            label,
          );
        if (f.compression !== 0 && f.compression !== 8)
          throw new ArrayParseError(
            `entry “${f.name}” uses zip compression method ${f.compression} (only stored and deflate are read)`,
            label,
          );
        if (f.size > bytes.length)
          throw new ArrayParseError(`entry “${f.name}” claims more bytes than the file has`, label);
        return true;
      },
    });
  } catch (err) {
    throw asParseError(err, `${label}: the zip is corrupt`);
  }
  const names = Object.keys(files);
  if (names.length === 0) throw new ArrayParseError('the .npz file holds no .npy entries', label);
  let total = 0;
  return names.map((entry) => {
    const name = entry.slice(0, -4);
    const a = readNpy(files[entry], `${label} entry “${entry}”`);
    total += a.data.length;
    if (total > ARRAY_LIMITS.maxElements)
      throw new ArrayParseError(
        `the arrays hold more than ${ARRAY_LIMITS.maxElements.toLocaleString('en')} elements together`,
        label,
      );
    return { ...a, name };
  });
}
