import { readFileSync } from 'node:fs';
import type { ChunkParser } from '../formats/types.ts';

/** Feeds bytes to a parser in chunks of `size` bytes (size <= 0: one chunk). */
export function feedChunks<R>(parser: ChunkParser<R>, bytes: Uint8Array, size: number): R {
  if (size <= 0) parser.push(bytes);
  else for (let i = 0; i < bytes.length; i += size) parser.push(bytes.subarray(i, i + size));
  return parser.end();
}

/** Pushes `bytes` cut at `cuts` (any numbers; taken modulo length + 1, sorted). */
export function feedCuts<R>(parser: ChunkParser<R>, bytes: Uint8Array, cuts: readonly number[]): R {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const p of points) {
    parser.push(bytes.subarray(from, p));
    from = p;
  }
  parser.push(bytes.subarray(from));
  return parser.end();
}

/** Chunk sizes every parser test re-runs with. */
export const CHUNK_SIZES = [0, 1, 7, 64];

/** A file of the app's embedded sample (public/samples). */
export function sampleFile(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL('../../../public/samples/' + name, import.meta.url)));
}

/** Bytes as a file handed to loadFiles. */
export const namedBlob = (name: string, bytes: Uint8Array): { name: string; blob: Blob } => ({ name, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) });

export function fixture(rel: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL('../formats/fixtures/' + rel, import.meta.url)));
}

// the real traces' reader lives with the folder's path and the skip rule (real-traces.ts)
export { realTrace } from './real-traces-dir.ts';
