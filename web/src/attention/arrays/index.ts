// The student's own arrays: parse what NumPy printed, read .npy / .npz / .json / .csv files,
// check an array against its role, compare, and carry arrays in a share link. These files are pure
// TypeScript with no DOM and import nothing from the rest of the page (the parsers run in Node
// tests and in the compute Worker); the feature's panel, state rows, compute and the page's half
// of the postMessage protocol sit beside them (panel.ts, state.ts, compute.ts, receive.ts).
export { ARRAY_LIMITS, ArrayParseError, checkedSize, shapeText, type NdArray } from './types';
export { parseArrayText, parseOneArray, parseCsv, parseGrid, SUMMARISED_FIX } from './text';
export { readNpy, halfToFloat } from './npy';
export { readNpz } from './npz';
export { readArrayFile, fileKind, type ArrayFileKind } from './files';
export {
  checkWeights,
  checkAttentionInputs,
  checkProjectionInputs,
  compareArrays,
  valueTolerance,
  COMPARE_SLACK,
  WEIGHTS_NAN_CAUSE,
  maskLooksInverted,
  emptyRows,
  rowsText,
  indexText,
  type WeightsCheck,
  type AttentionDims,
  type ProjectionDims,
  type Comparison,
} from './roles';
export {
  encodeArrayLink,
  decodeArrayLink,
  decodeArrayFields,
  encodeArrayFields,
  base64urlEncode,
  base64urlDecode,
  ARRAY_LINK_KEYS,
  ARRAY_LINK_MAX_CHARS,
  ARRAY_MESSAGE_MAX_CHARS,
  ARRAY_LINK_VERSION,
  type ArrayRole,
  type ArrayLinkOptions,
} from './link';
export {
  readArraysMessage,
  readyMessage,
  receivedMessage,
  ARRAY_MESSAGE_TYPES,
  ARRAY_MESSAGE_VERSION,
  ARRAYS_BY_MESSAGE_PARAM,
  READY_INTERVAL_MS,
  READY_TRIES,
} from './message';
