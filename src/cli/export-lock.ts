import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, lstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_NAMES } from '../core/tables/schema.ts';
import { onInterrupt } from './interrupt.ts';
import { makeDir } from './out-dir.ts';

/**
 * The export folder's lock: one export places and writes its tables at a time. The lock file
 * names its holder's pid and start time; a stale one (its process gone, or another process now
 * under that pid, or unreadable past a short grace) is taken over, a live holder waited for with
 * a message and a bound, signals honoured while waiting. Also the temporary files a killed export
 * left, removed by the next one that holds the lock.
 */

/** The lock a folder's export holds while it places and writes its tables. */
export const EXPORT_LOCK = '.stackmap-export.lock';

/** How long an export waits for another's lock by default, and the variable that changes it (seconds). */
export const LOCK_WAIT_DEFAULT_MS = 60_000;
export const LOCK_WAIT_ENV = 'STACKMAP_EXPORT_LOCK_WAIT';

export interface LockOptions {
  /** how long to wait for a live holder before giving up; default: $STACKMAP_EXPORT_LOCK_WAIT seconds, else 60 s */
  waitMs?: number;
  /** how old a lock file that names no holder (empty, or not written by this tool) must be to be taken over */
  graceMs?: number;
  /** what the wait says (stderr): what it waits for, and a stale lock taken over */
  log?: (s: string) => void;
}

/** What a lock file says, in the words this tool writes it. */
const LOCK_LINE = /^stackmap-export pid=(\d+) start=(\S+) token=(\S+)\n?$/;

/**
 * A process's start time (field 22 of /proc/PID/stat, clock ticks since boot), which tells the
 * process that wrote a lock from a later one given the same pid; null where there is no /proc.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the name (field 2) is in parentheses and may hold spaces: the fields after its last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[22 - 3] ?? null;
  } catch {
    return null;
  }
}

/** What holds a lock file: nobody (gone meanwhile), a live export, a stale lock (why), or a lock path that is no lock file. */
type Holder = { gone: true } | { held: number | null; why: string } | { stale: string; ino: number } | { refuse: string };

function inspect(lock: string, graceMs: number): Holder {
  let st;
  try {
    st = lstatSync(lock);
  } catch {
    return { gone: true };
  }
  // a folder (or a link, a pipe) where the lock goes: no export made it, and reading it would fail
  // forever (before: a loop at 100% CPU that ignored Ctrl-C)
  if (!st.isFile())
    return {
      refuse: `${lock} is ${st.isDirectory() ? 'a folder' : st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}, not an export's lock file: remove it if no export into this folder is running`,
    };
  let text: string;
  try {
    text = readFileSync(lock, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { gone: true };
    return { refuse: `cannot read ${lock}: ${(e as Error).message}` };
  }
  const m = LOCK_LINE.exec(text);
  if (!m) {
    // empty or foreign: an export writing it now (only where hard links are not to be had), or one
    // that failed or was killed while it did, or an older version's bare pid (pid 1 held it forever)
    const age = Date.now() - st.mtimeMs;
    return age > graceMs
      ? { stale: `it names no export (${text.length === 0 ? 'empty' : 'not written by this version'}) and is ${Math.round(age / 1000)} s old`, ino: st.ino }
      : { held: null, why: 'being written' };
  }
  const pid = Number(m[1]);
  if (!alive(pid)) return { stale: `its export (pid ${pid}) has ended`, ino: st.ino };
  const start = processStart(pid);
  if (m[2] !== '-' && start !== null && start !== m[2])
    return { stale: `pid ${pid} is another process now (it started at tick ${start}, the export at ${m[2]})`, ino: st.ino };
  return { held: pid, why: `held by pid ${pid}` };
}

/** Removes a stale lock, unless another process took it over first (then the lock it made stays). */
function takeOver(lock: string, ino: number, token: string): void {
  const moved = `${lock}.stale-${process.pid}-${token}`;
  try {
    renameSync(lock, moved);
  } catch {
    return; // gone meanwhile: taken over by another waiter, or released
  }
  if (lstatSync(moved).ino !== ino) {
    // another waiter's fresh lock was moved, not the stale one: it goes back
    try {
      linkSync(moved, lock);
    } catch {
      // a third lock is in place: that one holds
    }
  }
  rmSync(moved, { force: true });
}

/** seconds as a person reads them: 60, 0.2 */
const seconds = (ms: number) => String(Math.round(ms / 100) / 10);

const waitDefault = (): number => {
  const v = Number(process.env[LOCK_WAIT_ENV]);
  return process.env[LOCK_WAIT_ENV] !== undefined && Number.isFinite(v) && v >= 0 ? v * 1000 : LOCK_WAIT_DEFAULT_MS;
};

/**
 * Runs `fn` holding `dir`'s export lock (null: no lock). The lock is a file that appears whole
 * (written beside it, then hard-linked into place: it exists only with its content) naming its
 * holder by pid and start time. A lock whose holder has ended (killed), whose pid is another
 * process now, or that names no holder and is older than the grace is taken over (said on
 * stderr). A live holder is waited for, said on stderr with its pid, and given up on after
 * `waitMs` (the message says why, nothing is written); Ctrl-C and SIGTERM end the wait (exit 130).
 * A lock path that is a folder or no regular file is refused at once. The lock goes when `fn`
 * ends, in an error too.
 */
export async function withFolderLock<T>(dir: string | null, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T | { lockError: string }> {
  if (dir === null) return fn();
  const waitMs = opts.waitMs ?? waitDefault();
  const graceMs = opts.graceMs ?? 2000;
  const log = opts.log ?? (() => {});
  makeDir(dir);
  const lock = join(dir, EXPORT_LOCK);
  const token = randomBytes(6).toString('hex');
  const line = `stackmap-export pid=${process.pid} start=${processStart(process.pid) ?? '-'} token=${token}\n`;
  const began = Date.now();
  let said: number | null | undefined;
  // a wait is ended by Ctrl-C or SIGTERM: nothing is written yet, the handler exits 130
  const releaseWait = onInterrupt(() => {});
  try {
    for (;;) {
      let got: boolean;
      try {
        got = tryLock(lock, line, token);
      } catch (e) {
        // a full disk, a read-only folder: said with the lock's name; no lock is left
        return { lockError: `cannot make the lock ${lock}: ${(e as Error).message}` };
      }
      if (got) break;
      const h = inspect(lock, graceMs);
      if ('gone' in h) continue;
      if ('refuse' in h) return { lockError: h.refuse };
      if ('stale' in h) {
        log(`${lock}: taken over: ${h.stale}\n`);
        takeOver(lock, h.ino, token);
        continue;
      }
      if (Date.now() - began >= waitMs)
        return {
          lockError: `gave up after ${seconds(waitMs)} s waiting for ${lock} (${h.why}): another export into ${dir} is running; try again once it has ended (${LOCK_WAIT_ENV}=SECONDS waits longer)`,
        };
      if (said !== h.held) {
        said = h.held;
        log(`waiting for ${lock} (${h.why}): another export into ${dir} is running; waiting up to ${seconds(waitMs)} s\n`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    releaseWait();
  }
  const release = onInterrupt(() => rmSync(lock, { force: true }));
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
    release();
  }
}

/**
 * Makes the lock, or false when one is there. Written whole beside it, then linked into place:
 * a full disk fails the write (the error names the file) and leaves no lock; where hard links
 * are refused (some FUSE and FAT folders), made with O_EXCL and written (named by the grace).
 */
function tryLock(lock: string, line: string, token: string): boolean {
  const tmp = `${lock}.${process.pid}-${token}`;
  try {
    writeFileSync(tmp, line, { flag: 'wx' });
    try {
      linkSync(tmp, lock);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeFileSync(fd, line);
  } catch (e) {
    closeSync(fd);
    rmSync(lock, { force: true });
    throw e;
  }
  closeSync(fd);
  return true;
}

/** Whether a process of this pid runs (a lock's holder, a temporary file's writer). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The temporary files exports killed (SIGKILL, a crash) left in `dir` and its table folders: a
 * table being written (`.<name>.parquet.tmp-PID`), a write probe, a lock being made. Those whose
 * process has ended are removed (the caller holds the lock); returns what was removed.
 */
export function removeDeadTemps(dir: string): string[] {
  const removed: string[] = [];
  const pattern = /^\.(?:.+\.parquet\.tmp-(\d+)|stackmap-write-test-(\d+)|stackmap-export\.lock\.(?:stale-)?(\d+)-[0-9a-f]+)$/;
  const folders = [dir, ...TABLE_NAMES.map((t) => join(dir, t))];
  for (const folder of folders) {
    let names: string[];
    try {
      if (!lstatSync(folder).isDirectory()) continue;
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = pattern.exec(name);
      if (!m) continue;
      const pid = Number(m[1] ?? m[2] ?? m[3]);
      if (pid === process.pid || alive(pid)) continue;
      try {
        rmSync(join(folder, name), { force: true });
        removed.push(join(folder, name));
      } catch {
        // not ours to remove (permissions): it stays, as before
      }
    }
  }
  return removed;
}
