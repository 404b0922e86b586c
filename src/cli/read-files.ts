import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { Capture } from '../core/model/ingest.ts';
import { Ingest } from '../core/model/ingest.ts';

export interface ReadOutcome {
  capture: Capture;
  /** files that could not be opened or read, with the reason */
  failed: { file: string; reason: string }[];
}

const CHUNK = 1 << 20;

/** Streams each file from disk into one capture, chunk by chunk, never as one string. */
export async function readFiles(paths: string[]): Promise<ReadOutcome> {
  const ingest = new Ingest();
  const failed: ReadOutcome['failed'] = [];
  for (const path of paths) {
    try {
      await new Promise<void>((resolve, reject) => {
        const stream = createReadStream(path, { highWaterMark: CHUNK });
        const file = ingest.open(basename(path));
        stream.on('data', (c) => file.push(c as Buffer));
        stream.on('end', () => {
          file.end();
          resolve();
        });
        stream.on('error', reject);
      });
    } catch (e) {
      failed.push({ file: path, reason: (e as Error).message });
    }
  }
  return { capture: ingest.finish(), failed };
}
