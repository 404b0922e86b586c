import type { NamedBlob } from '../../workers/ingest-api.ts';

/**
 * Keeps the files of the last capture opened in this browser, so a reload reopens it rather
 * than the sample: in the origin private file system (OPFS, `navigator.storage.getDirectory()`),
 * else in IndexedDB. Nothing leaves the machine.
 *
 * Layout: one file per capture file under a key that is never reused, and a manifest (names,
 * sizes, keys) written last, so a save cut short leaves the previous manifest and its files
 * whole; keys the new manifest does not list are deleted after it is written. A file already
 * kept (read back at start, or written by an earlier save) is not written again: an Add writes
 * only the files it added.
 */

/** Beyond this the files are not kept (the browser's quota is shared with everything else). */
export const KEEP_LIMIT_BYTES = 512e6;

export type Backend = 'opfs' | 'indexeddb';

interface ManifestEntry {
  name: string;
  size: number;
  key: string;
}
interface Manifest {
  format: 'stackmap-explorer capture';
  version: 1;
  savedAt: number;
  files: ManifestEntry[];
}

export type KeepOutcome = { kept: true; backend: Backend; bytes: number } | { kept: false; reason: string };

export type StoredCapture =
  { state: 'none' } | { state: 'found'; backend: Backend; files: NamedBlob[]; bytes: number; savedAt: number } | { state: 'unreadable'; reason: string };

/** One place to keep blobs under keys, and the manifest. */
interface Store {
  backend: Backend;
  readManifest(): Promise<string | null>;
  writeManifest(text: string): Promise<void>;
  put(key: string, blob: Blob): Promise<void>;
  get(key: string): Promise<Blob | null>;
  keys(): Promise<string[]>;
  remove(key: string): Promise<void>;
  clear(): Promise<void>;
}

const MANIFEST = 'manifest.json';

/** Where each kept capture lives: the open capture, and the baseline it is compared with (issue 37). */
export type Slot = 'capture' | 'baseline';
const PLACES: Record<Slot, { dir: string; idb: string }> = {
  capture: { dir: 'stackmap-capture', idb: 'stackmap-explorer' },
  baseline: { dir: 'stackmap-baseline', idb: 'stackmap-explorer-baseline' },
};

async function opfsStore(DIR: string): Promise<Store | null> {
  if (typeof navigator === 'undefined' || typeof navigator.storage?.getDirectory !== 'function') return null;
  let root: FileSystemDirectoryHandle;
  try {
    root = await navigator.storage.getDirectory();
  } catch {
    return null;
  }
  const dir = () => root.getDirectoryHandle(DIR, { create: true });
  const write = async (name: string, data: Blob | string) => {
    const handle = await (await dir()).getFileHandle(name, { create: true });
    const w = await handle.createWritable();
    try {
      await w.write(data);
      await w.close();
    } catch (e) {
      await w.abort().catch(() => {});
      throw e;
    }
  };
  const read = async (name: string): Promise<File | null> => {
    try {
      // reading never creates the folder: a visit with nothing kept leaves the origin's storage empty
      return await (await (await root.getDirectoryHandle(DIR)).getFileHandle(name)).getFile();
    } catch (e) {
      if ((e as DOMException).name === 'NotFoundError' || (e as DOMException).name === 'TypeMismatchError') return null;
      throw e;
    }
  };
  return {
    backend: 'opfs',
    readManifest: async () => (await read(MANIFEST))?.text() ?? null,
    writeManifest: (text) => write(MANIFEST, text),
    put: (key, blob) => write(key, blob),
    get: (key) => read(key),
    async keys() {
      const out: string[] = [];
      for await (const name of (await dir()).keys()) if (name !== MANIFEST) out.push(name);
      return out;
    },
    async remove(key) {
      await (await dir()).removeEntry(key).catch(() => {});
    },
    async clear() {
      await root.removeEntry(DIR, { recursive: true }).catch(() => {});
    },
  };
}

const IDB_FILES = 'capture-files';
const IDB_META = 'capture-meta';

function idbStore(IDB_NAME: string): Store | null {
  if (typeof indexedDB === 'undefined') return null;
  let db: Promise<IDBDatabase> | null = null;
  const open = () =>
    (db ??= new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(IDB_NAME, 1);
      req.onupgradeneeded = () => {
        req.result.createObjectStore(IDB_FILES);
        req.result.createObjectStore(IDB_META);
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error ?? new Error('IndexedDB would not open'));
    }));
  const run = async <T>(store: string, mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> => {
    const tx = (await open()).transaction(store, mode);
    const req = fn(tx.objectStore(store));
    return new Promise<T>((resolve, reject) => {
      tx.oncomplete = () => resolve(req.result);
      tx.onabort = tx.onerror = () => reject(tx.error ?? req.error ?? new Error('IndexedDB transaction failed'));
    });
  };
  return {
    backend: 'indexeddb',
    readManifest: async () => ((await run(IDB_META, 'readonly', (s) => s.get(MANIFEST))) as string | undefined) ?? null,
    writeManifest: async (text) => void (await run(IDB_META, 'readwrite', (s) => s.put(text, MANIFEST))),
    put: async (key, blob) => void (await run(IDB_FILES, 'readwrite', (s) => s.put(blob, key))),
    get: async (key) => ((await run(IDB_FILES, 'readonly', (s) => s.get(key))) as Blob | undefined) ?? null,
    keys: async () => (await run(IDB_FILES, 'readonly', (s) => s.getAllKeys())).map(String),
    remove: async (key) => void (await run(IDB_FILES, 'readwrite', (s) => s.delete(key))),
    async clear() {
      await run(IDB_FILES, 'readwrite', (s) => s.clear());
      await run(IDB_META, 'readwrite', (s) => s.clear());
    },
  };
}

const chosen = new Map<Slot, Promise<Store | null>>();
/** OPFS where the browser has it, else IndexedDB, else nothing (then nothing is kept). */
const store = (slot: Slot) => {
  let s = chosen.get(slot);
  if (!s) chosen.set(slot, (s = opfsStore(PLACES[slot].dir).then((o) => o ?? idbStore(PLACES[slot].idb))));
  return s;
};

/** blob -> the key it is kept under (only while the manifest lists that key) */
const keptAs = new WeakMap<Blob, string>();

/** Saves, reads and forgets run one at a time, in order. */
let queue: Promise<unknown> = Promise.resolve();
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn);
  queue = run.catch(() => undefined);
  return run;
}

function parseManifest(text: string): Manifest | string {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return 'its list of files is not JSON';
  }
  const o = m as Partial<Manifest>;
  if (!o || o.format !== 'stackmap-explorer capture' || o.version !== 1 || !Array.isArray(o.files)) return 'its list of files is not one this page wrote';
  for (const f of o.files as unknown[]) {
    const e = f as Partial<ManifestEntry>;
    if (!e || typeof e.name !== 'string' || typeof e.key !== 'string' || typeof e.size !== 'number' || !(e.size >= 0)) {
      return 'its list of files has an entry without a name, key or size';
    }
  }
  if (o.files.length === 0) return 'its list of files is empty';
  return o as Manifest;
}

/** integers as the page prints them (fmtInt: 16,384) */
const int = (n: number) => n.toLocaleString('en-US');
const mb = (n: number) => `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)} MB`;

/**
 * Keeps `files` as the capture a reload reopens, replacing what was kept. Too large, no
 * storage, or a write that fails (quota): nothing is kept (the old capture is forgotten too,
 * since it is no longer the last one opened), and the outcome says why.
 */
export function keepCapture(files: readonly NamedBlob[], slot: Slot = 'capture'): Promise<KeepOutcome> {
  return serial(async () => {
    const bytes = files.reduce((n, f) => n + f.blob.size, 0);
    const s = await store(slot);
    if (!s) return { kept: false, reason: 'this browser offers no storage to this page (no OPFS, no IndexedDB)' };
    if (bytes > KEEP_LIMIT_BYTES) {
      await s.clear().catch(() => {});
      return { kept: false, reason: `${mb(bytes)} is more than the ${mb(KEEP_LIMIT_BYTES)} this page keeps in the browser` };
    }
    try {
      const old = await s.readManifest();
      const listed = new Set<string>();
      if (old !== null) {
        const m = parseManifest(old);
        if (typeof m !== 'string') for (const e of m.files) listed.add(e.key);
      }
      const stamp = Date.now().toString(36);
      const entries: ManifestEntry[] = [];
      for (let i = 0; i < files.length; i++) {
        const f = files[i];
        let key = keptAs.get(f.blob);
        if (key === undefined || !listed.has(key)) {
          key = `f-${stamp}-${i}`;
          await s.put(key, f.blob);
        }
        entries.push({ name: f.name, size: f.blob.size, key });
      }
      const manifest: Manifest = { format: 'stackmap-explorer capture', version: 1, savedAt: Date.now(), files: entries };
      await s.writeManifest(JSON.stringify(manifest));
      const keep = new Set(entries.map((e) => e.key));
      files.forEach((f, i) => keptAs.set(f.blob, entries[i].key));
      for (const k of await s.keys()) if (!keep.has(k)) await s.remove(k);
      return { kept: true, backend: s.backend, bytes };
    } catch (e) {
      await s.clear().catch(() => {});
      return { kept: false, reason: `the browser would not store it (${(e as Error).message || (e as Error).name})` };
    }
  });
}

/** The kept capture's files, if any; anything missing or damaged is `unreadable` (then forget it). */
export function readKeptCapture(slot: Slot = 'capture'): Promise<StoredCapture> {
  return serial(async () => {
    const s = await store(slot);
    if (!s) return { state: 'none' };
    let text: string | null;
    try {
      text = await s.readManifest();
    } catch (e) {
      return { state: 'unreadable', reason: `its list of files cannot be read (${(e as Error).message})` };
    }
    if (text === null) return { state: 'none' };
    const m = parseManifest(text);
    if (typeof m === 'string') return { state: 'unreadable', reason: m };
    const files: NamedBlob[] = [];
    for (const e of m.files) {
      let blob: Blob | null;
      try {
        blob = await s.get(e.key);
      } catch {
        blob = null;
      }
      if (!blob) return { state: 'unreadable', reason: `${e.name} is missing from it` };
      if (blob.size !== e.size) return { state: 'unreadable', reason: `${e.name} is ${int(blob.size)} bytes where ${int(e.size)} were kept` };
      keptAs.set(blob, e.key);
      files.push({ name: e.name, blob });
    }
    return { state: 'found', backend: s.backend, files, bytes: files.reduce((n, f) => n + f.blob.size, 0), savedAt: m.savedAt };
  });
}

/** Deletes every kept file and the manifest. */
export function forgetCapture(slot: Slot = 'capture'): Promise<void> {
  return serial(async () => {
    const s = await store(slot);
    await s?.clear().catch(() => {});
  });
}
