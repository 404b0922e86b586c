// The shapes every file of unpack/ shares: a named stream, how a damaged layer is reported, the state of one walk.
import type { FileBudget } from '../formats/decompress-budget.ts';

/** One file as the parsers see it. */
export interface NamedStream {
  name: string;
  stream: ReadableStream<Uint8Array>;
  /**
   * Every byte of the file, when unpack read it whole before handing it on (a tar member under
   * SNIFF_BYTES): `stream` gives these same bytes, and is only made when asked for, so a reader
   * can tell from them alone whether it takes the file (load.ts skips one no reader takes).
   */
  whole?: Uint8Array;
}

/** Records a diagnostic for `file`, at a byte offset when one is known. */
export type UnpackReport = (file: string, message: string, offset?: number) => void;

export interface Ctx {
  report: UnpackReport;
  /** the given file's decompression budget */
  budget: FileBudget;
}
