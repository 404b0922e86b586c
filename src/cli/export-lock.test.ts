// The export lock and an export's temporary files against what an adversary does to a folder
// (issue 34, 9 and 17): locks left empty, foreign, stale or made folders, a holder that lives, a
// disk that fills, an export killed with SIGKILL. Before, each of these waited forever (or spun
// at 100% CPU), or ended in "internal error" with the lock left behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TABLE_NAMES } from '../core/tables/schema.ts';
import { exportCommand } from './export.ts';
import { EXPORT_LOCK, LOCK_WAIT_ENV, processStart, withFolderLock } from './export-lock.ts';
import { writeCapture } from './generate-capture.ts';
import { DEFAULT_GENERATE } from './generate.ts';
import { captureOutput, cliArgv } from './test-io.ts';

afterEach(() => vi.restoreAllMocks());

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const TRACE = SAMPLES + 'trace';
const tmp = (p: string) => mkdtempSync(join(tmpdir(), `smx-lock-${p}-`));
/** every file under `dir`, recursively, relative to it */
const all = (dir: string): string[] => (existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : []);
const temps = (dir: string) => all(dir).filter((f) => /\.tmp-\d+$|\.stackmap-export\.lock/.test(f));
/** a lock as this tool writes it, of this (live) test process */
const liveLock = (start = processStart(process.pid)) => `stackmap-export pid=${process.pid} start=${start} token=0123abcd\n`;

async function run(args: string[]) {
  const io = captureOutput();
  const code = await exportCommand(args);
  vi.restoreAllMocks();
  return { code, out: io.out.join(''), err: io.err.join('') };
}

/** polls `cond` until it holds (the condition, not a clock) */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; !cond(); i++) {
    if (i > 3000) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** a pid that has ended: a process started and waited for */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('the export lock', () => {
  it('a lock left empty (a full disk), holding text, or a bare pid 1 (older locks): taken over once older than the grace, said on stderr', async () => {
    for (const content of ['', 'hello', '1']) {
      const dir = tmp('stale');
      const lock = join(dir, EXPORT_LOCK);
      writeFileSync(lock, content);
      const past = new Date(Date.now() - 60_000);
      utimesSync(lock, past, past);
      const r = await run(['--parquet', dir, TRACE]);
      expect(r.code).toBe(0);
      // its age when the export looked: 60 s, or a little more on a loaded machine (CI once saw 61)
      const m = new RegExp(`^${lock}: taken over: it names no export \\((empty|not written by this version)\\) and is (\\d+) s old\\n$`).exec(r.err);
      expect(m, r.err).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThanOrEqual(60);
      expect(Number(m![2])).toBeLessThan(90);
      expect(all(dir)).toEqual(TABLE_NAMES.map((t) => `${t}.parquet`).sort());
    }
  }, 30_000);

  it('a lock whose holder ended, or whose pid is another process now (another start time): taken over at once', async () => {
    const dead = await deadPid();
    for (const [content, why] of [
      [`stackmap-export pid=${dead} start=1 token=ab\n`, `its export (pid ${dead}) has ended`],
      [liveLock('1'), `pid ${process.pid} is another process now`],
    ]) {
      const dir = tmp('dead');
      writeFileSync(join(dir, EXPORT_LOCK), content);
      const r = await run(['--parquet', dir, TRACE]);
      expect(r.code).toBe(0);
      expect(r.err).toContain(`${join(dir, EXPORT_LOCK)}: taken over: ${why}`);
      expect(existsSync(join(dir, EXPORT_LOCK))).toBe(false);
    }
  }, 30_000);

  it('a live holder: waited for, said with its pid; given up on after the bound with one line, nothing written; released, the wait ends', async () => {
    const dir = tmp('live');
    const lock = join(dir, EXPORT_LOCK);
    writeFileSync(lock, liveLock());
    const log: string[] = [];
    const r = await withFolderLock(dir, async () => 'ran', { waitMs: 200, log: (s) => log.push(s) });
    expect(r).toEqual({
      lockError: `gave up after 0.2 s waiting for ${lock} (held by pid ${process.pid}): another export into ${dir} is running; try again once it has ended (${LOCK_WAIT_ENV}=SECONDS waits longer)`,
    });
    expect(log).toEqual([`waiting for ${lock} (held by pid ${process.pid}): another export into ${dir} is running; waiting up to 0.2 s\n`]);
    expect(readFileSync(lock, 'utf8')).toBe(liveLock());
    // the holder lets go while one waits: the wait ends with the lock taken, and it is released after
    log.length = 0;
    const waiting = withFolderLock(dir, async () => readFileSync(lock, 'utf8'), { waitMs: 60_000, log: (s) => log.push(s) });
    await until(() => log.length > 0, 'the wait is said');
    rmSync(lock); // as its holder ends
    expect(await waiting).toMatch(new RegExp(`^stackmap-export pid=${process.pid} start=\\S+ token=[0-9a-f]+\\n$`));
    expect(existsSync(lock)).toBe(false);
  }, 30_000);

  it('a lock that is a folder: refused at once with its name (before: a loop at 100% CPU that ignored Ctrl-C)', async () => {
    const dir = tmp('folder');
    mkdirSync(join(dir, EXPORT_LOCK));
    const r = await run(['--parquet', dir, TRACE]);
    expect([r.code, r.out, r.err]).toEqual([
      1,
      '',
      `${join(dir, EXPORT_LOCK)} is a folder, not an export's lock file: remove it if no export into this folder is running\n`,
    ]);
    const link = tmp('link');
    symlinkSync('/dev/null', join(link, EXPORT_LOCK));
    expect((await run(['--parquet', link, TRACE])).err).toBe(
      `${join(link, EXPORT_LOCK)} is a symbolic link, not an export's lock file: remove it if no export into this folder is running\n`,
    );
  }, 30_000);

  it("SIGTERM while an export waits for the lock: exit 130, the holder's lock untouched; the wait said on stderr", async () => {
    const dir = tmp('sigterm');
    writeFileSync(join(dir, EXPORT_LOCK), liveLock());
    const child = spawn(...cliArgv('export', '--parquet', dir, TRACE), {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, [LOCK_WAIT_ENV]: '600' },
    });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const ended = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await until(() => err.includes('waiting for'), 'the export waits');
    expect(err).toBe(`waiting for ${join(dir, EXPORT_LOCK)} (held by pid ${process.pid}): another export into ${dir} is running; waiting up to 600 s\n`);
    child.kill('SIGTERM');
    expect(await ended).toBe(130);
    expect(readFileSync(join(dir, EXPORT_LOCK), 'utf8')).toBe(liveLock());
    expect(all(dir)).toEqual([EXPORT_LOCK]);
  }, 30_000);
});

describe('write errors and temporary files', () => {
  it('a lock that cannot be made: one line naming it, exit 1, nothing left in the folder (before: "internal error" and an empty lock every later export waited on)', async () => {
    const dir = tmp('nolock');
    // a file size limit of 0: the kernel refuses the lock's first byte (EFBIG), as a full disk would (ENOSPC)
    const [node, args] = cliArgv('export', '--parquet', dir, TRACE);
    const child = spawn('bash', ['-c', 'ulimit -f 0; exec "$@"', 'bash', node, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect([code, out, err]).toEqual([1, '', `cannot make the lock ${join(dir, EXPORT_LOCK)}: EFBIG: file too large, write\n`]);
    expect(all(dir)).toEqual([]);
    // without the limit the next export goes through
    expect((await run(['--parquet', dir, TRACE])).code).toBe(0);
  }, 30_000);

  it('ENOSPC while a table is written: one line naming the file, no stack, the lock released and no temporary file; the next export goes through', async () => {
    const dir = tmp('enospc');
    // the first table's temporary file, made a link to /dev/full: the kernel's own ENOSPC on its first write
    const first = join(dir, `.${TABLE_NAMES[0]}.parquet.tmp-${process.pid}`);
    symlinkSync('/dev/full', first);
    const r = await run(['--parquet', dir, TRACE]);
    expect([r.code, r.out, r.err]).toEqual([1, '', `export to ${dir} failed: cannot write ${first}: ENOSPC: no space left on device, write\n`]);
    expect(all(dir)).toEqual([]);
    const again = await run(['--parquet', dir, TRACE]);
    expect([again.code, again.err]).toEqual([0, '']);
    expect(all(dir)).toEqual(TABLE_NAMES.map((t) => `${t}.parquet`).sort());
  }, 30_000);

  it('an export killed with SIGKILL: the next one removes its temporary files and its lock, and says so', async () => {
    const cap = tmp('cap');
    const report = writeCapture({ ...DEFAULT_GENERATE, out: cap, events: null, mb: 4, json: false });
    const files = report.files.map((f) => join(cap, f.name));
    const dir = join(tmp('killed'), 'tables');
    const child = spawn(...cliArgv('export', '--parquet', dir, ...files), { stdio: 'ignore' });
    const ended = new Promise((resolve) => child.on('exit', resolve));
    await until(() => child.exitCode !== null || all(dir).some((f) => f.includes('.tmp-')), 'a temporary table file');
    child.kill('SIGKILL');
    await ended;
    const left = temps(dir);
    expect(left).toContain(EXPORT_LOCK);
    expect(left.some((f) => f.endsWith(`.tmp-${child.pid}`))).toBe(true);
    const r = await run(['--parquet', dir, TRACE]);
    expect(r.code).toBe(0);
    const removed = left.filter((f) => f !== EXPORT_LOCK).map((f) => join(dir, f));
    expect(r.err).toBe(
      `${join(dir, EXPORT_LOCK)}: taken over: its export (pid ${child.pid}) has ended\n` +
        `removed ${removed.length} temporary file${removed.length === 1 ? '' : 's'} left by an export that did not finish: ${removed.join(', ')}\n`,
    );
    expect(temps(dir)).toEqual([]);
  }, 60_000);
});
