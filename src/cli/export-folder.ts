import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, renameSync, rmdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CAPTURE_ID_HEAD_BYTES, captureIdOf, Fnv1a64, type CaptureFileId } from '../core/tables/id.ts';
import { TABLE_NAMES, type TableName } from '../core/tables/schema.ts';
import { readFooter } from '../core/tables/parquet-footer.ts';
import { META_CAPTURE } from '../core/tables/parquet.ts';
import { makeDir } from './out-dir.ts';

/**
 * Where a capture's tables go in an export folder: the capture's id from its files on disk, the
 * capture_id a table file already there holds, the folder's layout (flat for one capture, a
 * folder per table for many, converted when a second capture comes), and the lock one export
 * holds while it places and writes.
 */

/** The capture_id of files on disk: their names (no folder), sizes, first 4 KiB and content digests. Unopenable paths are left out. */
export function captureIdOfPaths(paths: readonly string[]): string {
  const files: CaptureFileId[] = [];
  for (const p of paths) {
    try {
      const st = statSync(p);
      if (!st.isFile()) continue;
      const fd = openSync(p, 'r');
      try {
        // read to the end, not to the size the file says (a file of /proc says 0): as readFiles reads it
        const head = new Uint8Array(CAPTURE_ID_HEAD_BYTES);
        let got = 0;
        while (got < head.length) {
          const n = readSync(fd, head, got, head.length - got, got);
          if (n === 0) break;
          got += n;
        }
        // every byte, 1 MiB at a time, for the content digest (as contentDigest reads a stream)
        const h = new Fnv1a64();
        const buf = new Uint8Array(1 << 20);
        let at = 0;
        for (;;) {
          const n = readSync(fd, buf, 0, buf.length, at);
          if (n === 0) break;
          h.update(buf.subarray(0, n));
          at += n;
        }
        files.push({ name: basename(p), size: at, head: head.subarray(0, got), digest: h.hex() });
      } finally {
        closeSync(fd);
      }
    } catch {
      // missing or unreadable: readFiles reports it; the id is of the files that can be read
    }
  }
  return captureIdOf(files);
}

/** The footer's capture_id of a table file this tool wrote, or null. */
export function parquetCaptureId(path: string): string | null {
  const r = footerCaptureId(path);
  return 'id' in r ? r.id : null;
}

/** The footer's capture_id of a table file this tool wrote, or why there is none: the byte it is at, and the reason. */
export function footerCaptureId(path: string): { id: string } | { why: string } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    return { why: `cannot be opened: ${(e as Error).message}` };
  }
  try {
    const read = (offset: number, length: number) => {
      const b = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const n = readSync(fd, b, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return b.subarray(0, got);
    };
    const r = readFooter(fstatSync(fd).size, read);
    if ('problem' in r) return { why: `byte ${r.problem.offset}: ${r.problem.reason}` };
    const id = r.keyValues.get(META_CAPTURE);
    return id === undefined ? { why: `no ${META_CAPTURE} in its footer's key-value metadata` } : { id };
  } catch (e) {
    return { why: `cannot be read: ${(e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

export type Layout = 'flat' | 'folders';

/** What DIR holds: its flat table files, its table folders. */
function survey(dir: string): { flat: TableName[]; folders: TableName[] } {
  const flat: TableName[] = [];
  const folders: TableName[] = [];
  if (!existsSync(dir)) return { flat, folders };
  const names = new Set(readdirSync(dir));
  // stat, not lstat: a link to a table's file or folder counts as one; a dangling link counts as nothing here
  const stat = (p: string) => statSync(p, { throwIfNoEntry: false });
  for (const t of TABLE_NAMES) {
    if (names.has(`${t}.parquet`) && stat(join(dir, `${t}.parquet`))?.isFile()) flat.push(t);
    if (names.has(t) && stat(join(dir, t))?.isDirectory()) folders.push(t);
  }
  return { flat, folders };
}

export interface Placement {
  layout: Layout;
  /** the capture whose flat files were moved into DIR/<table>/<id>.parquet, or null */
  converted: string | null;
  /** where each table of this capture goes */
  fileOf: (t: TableName) => string;
  /** puts a conversion back (the moved files where they were, the folders made for them gone): an export that fails or is interrupted leaves the folder as it found it */
  undo?: () => void;
}

/**
 * Where a capture's tables go in DIR: flat into an empty DIR (or one holding this capture's
 * flat files), else by capture. One earlier capture's flat files are moved into the folder
 * layout first; flat files of no known capture are refused rather than moved or overwritten.
 */
export function place(dir: string, captureId: string, log: (s: string) => void): Placement | { error: string } {
  if (existsSync(dir) && !statSync(dir).isDirectory()) return { error: `${dir} is not a folder` };
  const { flat, folders } = survey(dir);
  const flatIds = new Set<string>();
  for (const t of flat) {
    const file = join(dir, `${t}.parquet`);
    const r = footerCaptureId(file);
    if ('why' in r) return { error: `${file} is no table file of this tool (${r.why}): move it away, or export to another folder` };
    flatIds.add(r.id);
  }
  const flatFile = (t: TableName) => join(dir, `${t}.parquet`);
  const folderFile = (t: TableName, id: string) => join(dir, t, `${id}.parquet`);
  if (folders.length === 0 && (flat.length === 0 || (flatIds.size === 1 && flatIds.has(captureId)))) {
    return { layout: 'flat', converted: null, fileOf: flatFile };
  }
  let converted: string | null = null;
  let undo: (() => void) | undefined;
  if (flat.length) {
    if (flatIds.size > 1)
      return {
        error: `${dir} holds flat table files of ${flatIds.size} captures (${[...flatIds].join(', ')}): sort them into ${dir}/<table>/<capture_id>.parquet first`,
      };
    const id = (converted = [...flatIds][0]!);
    const moved: TableName[] = [];
    const made: string[] = [];
    undo = () => {
      for (const t of moved) renameSync(folderFile(t, id), flatFile(t));
      for (const d of made.reverse()) {
        try {
          rmdirSync(d);
        } catch {
          // something else was put there meanwhile: it stays
        }
      }
    };
    for (const t of flat) {
      if (!existsSync(join(dir, t))) made.push(join(dir, t));
      makeDir(join(dir, t));
      renameSync(flatFile(t), folderFile(t, id));
      moved.push(t);
    }
    log(`${dir} held capture ${converted} as ${dir}/<table>.parquet: moved to ${dir}/<table>/${converted}.parquet to add capture ${captureId} beside it\n`);
  }
  return { layout: 'folders', converted, fileOf: (t) => folderFile(t, captureId), undo };
}
