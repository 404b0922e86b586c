// The shapes every file of unpack/ shares: a named stream, how a damaged layer is reported, the state of one walk.
import type { FileBudget } from '../formats/decompress-budget.ts';

/** One file as the parsers see it. */
export interface NamedStream {
  name: string;
  stream: ReadableStream<Uint8Array>;
}

/** Records a diagnostic for `file`, at a byte offset when one is known. */
export type UnpackReport = (file: string, message: string, offset?: number) => void;

export interface Ctx {
  report: UnpackReport;
  /** the given file's decompression budget */
  budget: FileBudget;
}
