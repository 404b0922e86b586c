// The shapes the trace.dat reader's files share: what it reports, and the state of one body read.
import type { ByteCount, ParseContext } from '../types.ts';
import type { DatMeta } from './sections.ts';

export interface TraceDatResult extends ByteCount {
  version: number | null;
  littleEndian: boolean | null;
  cpus: number | null;
  events: number;
  /** events per CPU (index = cpu) */
  perCpu: number[];
  lostMarkers: number;
  /** version 7: the compression named in the header (`none`, `zstd`, `zlib`) */
  compression: string | null;
  /** the trace clock, when an option names it */
  clock: string | null;
}

export interface DatBody {
  res: TraceDatResult;
  ctx: ParseContext;
  longSize: number;
  pageSize: number;
  /** page readers for a file page and a decompressed one */
  pages(
    meta: DatMeta,
    tsOf: ((ns: number) => number) | null,
  ): { file(p: Uint8Array, at: number, cpu: number): void; inner(p: Uint8Array, at: number, cpu: number): void };
}
