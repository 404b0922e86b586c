import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import type { Capture } from '../core/model/ingest.ts';
import { loadFiles, type NamedBlob } from '../core/model/load.ts';

export interface ReadOutcome {
  capture: Capture;
  /** files that could not be opened, with the reason */
  failed: { file: string; reason: string }[];
}

/** Opens each file as a Blob and loads them through the same path as the browser's worker. */
export async function readFiles(paths: string[]): Promise<ReadOutcome> {
  const files: NamedBlob[] = [];
  const failed: ReadOutcome['failed'] = [];
  for (const path of paths) {
    try {
      files.push({ name: basename(path), blob: await openAsBlob(path) });
    } catch (e) {
      failed.push({ file: path, reason: (e as Error).message });
    }
  }
  return { capture: await loadFiles(files), failed };
}
