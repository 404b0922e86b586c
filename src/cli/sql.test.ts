import { execFile, spawn } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stackHash } from '../core/query/stack-hash.ts';
import { summarize, type Summary } from '../core/capture/summary.ts';
import { exportCommand } from './export.ts';
import { readFiles } from './read-files.ts';
import { DEFAULT_LIMIT, sqlCommand } from './sql.ts';
import { formatTable } from './sql-format.ts';
import { streamQuery, tablesIn } from './sql-query.ts';
import { captureOutput, cliArgv } from './test-io.ts';

afterEach(() => vi.restoreAllMocks());

const exec = promisify(execFile);
const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const SAMPLE = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'stack_map.gen3', 'stack_map_stat', 'kallsyms'].map(
  (f) => SAMPLES + f,
);
const cli = (...args: string[]) =>
  exec('npx', ['tsx', new URL('./main.ts', import.meta.url).pathname, ...args], { encoding: 'utf8' }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

/** the command in this process (DuckDB loads once per file): the spawned CLI is checked by the first test */
async function sql(...args: string[]) {
  const io = captureOutput();
  const code = await sqlCommand(args);
  vi.restoreAllMocks();
  return { code, stdout: io.out.join(''), stderr: io.err.join('') };
}

let summary: Summary;
let folder: string;
beforeAll(async () => {
  summary = summarize((await readFiles(SAMPLE)).capture);
  folder = join(mkdtempSync(join(tmpdir(), 'smx-sql-')), 'tables');
  const io = captureOutput();
  const code = await exportCommand(['--parquet', folder, ...SAMPLE]);
  vi.restoreAllMocks();
  expect([code, io.err.join('')]).toEqual([0, '']);
});

describe('cli sql', () => {
  it('--csv: what DuckDB reads back as the same rows (its CSV reader, the second method); --file: the query from a file', async () => {
    const q = `SELECT task, count(*) AS n FROM events GROUP BY task ORDER BY n DESC, task LIMIT 5; SELECT 'a,"b"' || chr(10) || 'c' AS tricky, NULL AS none, 7 AS seven`;
    const dir = mkdtempSync(join(tmpdir(), 'smx-csv-'));
    const qf = join(dir, 'q.sql');
    writeFileSync(qf, q);
    const r = await sql('--csv', '--file', qf, folder);
    expect(r.code).toBe(0);
    const [first, second] = r.stdout.split('\r\n\r\n');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    try {
      const back = async (csv: string) => {
        const f = join(dir, `r${Math.random()}.csv`);
        writeFileSync(f, csv.endsWith('\r\n') ? csv : csv + '\r\n');
        return (await con.runAndReadAll(`SELECT * FROM read_csv('${f}', header = true, all_varchar = true)`)).getRowsJS();
      };
      const j = JSON.parse((await sql('--json', q.split(';')[0], folder)).stdout) as { rows: unknown[][] };
      expect(await back(first)).toEqual(j.rows.map((row) => row.map((v) => (v === null ? null : String(v)))));
      expect(await back(second)).toEqual([['a,"b"\nc', null, '7']]);
    } finally {
      con.closeSync();
      db.closeSync();
    }
    expect((await sql('--csv', '--json', 'SELECT 1', folder)).code).toBe(2);
    expect((await sql('--file', join(dir, 'missing.sql'), folder)).code).toBe(2);
  }, 30_000);

  it('several statements: each result in turn (issue 23: only the last was printed), tables and JSON lines', async () => {
    const t = await sql('SELECT count(*) AS n FROM events; SELECT count(DISTINCT stack_hash) AS s FROM stacks', folder);
    expect(t.code).toBe(0);
    expect(t.stdout).toBe(
      `-- statement 1 of 2\n${formatTable({ columns: [{ name: 'n', type: 'BIGINT' }], rows: [[summary.events]] })}\n-- statement 2 of 2\n` +
        formatTable({ columns: [{ name: 's', type: 'BIGINT' }], rows: [[summary.uniqueStacks]] }),
    );
    const j = await sql('--json', 'SELECT 1 AS a; SELECT 2 AS b', folder);
    expect(
      j.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { columns: [{ name: 'a', type: 'INTEGER' }], rows: [[1]] },
      { columns: [{ name: 'b', type: 'INTEGER' }], rows: [[2]] },
    ]);
  }, 30_000);

  it('--json over a capture: the numbers summary --json prints, the top stack by its hash', async () => {
    const q = `SELECT (SELECT count(*) FROM events) AS events,
        (SELECT count(*) FROM stacks) AS stacks,
        stack_hash, count(*) AS n
      FROM records WHERE stack_hash IS NOT NULL GROUP BY stack_hash ORDER BY n DESC, min(ts) LIMIT 1`;
    const r = await cli('sql', q, '--json', ...SAMPLE);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const j = JSON.parse(r.stdout);
    expect(j.columns).toEqual([
      { name: 'events', type: 'BIGINT' },
      { name: 'stacks', type: 'BIGINT' },
      { name: 'stack_hash', type: 'VARCHAR' },
      { name: 'n', type: 'BIGINT' },
    ]);
    expect(j.rows).toEqual([[summary.events, summary.uniqueStacks, stackHash(summary.top[0].frames), summary.top[0].count]]);
  }, 30_000);

  it("a query error: DuckDB's message on stderr, nothing on stdout, exit 1; no query: exit 2", async () => {
    const r = await sql('SELECT no_such_column FROM events', folder);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/Binder Error: Referenced column "no_such_column" not found/);
    const u = await sql('--json');
    expect(u.code).toBe(2);
  }, 30_000);

  it('a Parquet folder written by export, queried as it is: an aligned table; BIGINT past 2^53 as a string', async () => {
    const r = await sql("SELECT status, count(*) AS n FROM records WHERE kind = 'cookie-v8' GROUP BY status ORDER BY n DESC", folder);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^status\s+n$/);
    expect(lines[1]).toMatch(/^-+ {2}-+$/);
    const body = Object.fromEntries(
      lines
        .slice(2, -1)
        .map((l) => l.split(/\s+/))
        .map(([s, n]) => [s, Number(n)]),
    );
    const { status } = summary;
    expect(body).toEqual(
      Object.fromEntries(
        Object.entries({ resolved: status.resolved, 'no-slot': status['no-slot'], 'no-dump': status['no-dump'], ambiguous: status.ambiguous }).filter(
          ([, n]) => n > 0,
        ),
      ),
    );
    expect(lines.at(-1)).toBe(`(${lines.length - 3} rows)`);
    const big = await sql('SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, NULL AS nothing, 1.5 AS x', '--json', folder);
    expect(JSON.parse(big.stdout).rows).toEqual([['9007199254740993', 42, null, 1.5]]);
  }, 30_000);

  it('refuses a capture whose export did not finish (no captures row), naming it; a whole one beside it is not enough', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'smx-half-')), 'fleet');
    const one = captureOutput();
    expect(await exportCommand(['--parquet', dir, ...SAMPLE])).toBe(0);
    expect(await exportCommand(['--parquet', dir, SAMPLES + 'trace'])).toBe(0);
    vi.restoreAllMocks();
    void one;
    const ids = readdirSync(join(dir, 'captures')).map((f) => f.replace('.parquet', ''));
    expect(ids.length).toBe(2);
    expect((await sql('SELECT count(*) FROM captures', '--csv', dir)).stdout).toBe('count_star()\r\n2\r\n');
    // as an export interrupted between its tables and its mark leaves it
    rmSync(join(dir, 'captures', `${ids[1]}.parquet`));
    const r = await sql('SELECT count(*) FROM events', dir);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain(`${join(dir, 'events', ids[1] + '.parquet')}: capture ${ids[1]} is not complete`);
    expect(r.stderr).toContain('export the capture again');
    expect(r.stderr).not.toContain(ids[0]);
  }, 60_000);

  it('--format csv|json|table says what --csv and --json do; --output FILE writes there, atomically, and nothing on stdout', async () => {
    const q = 'SELECT cpu, count(*) AS n FROM events GROUP BY cpu ORDER BY cpu';
    expect((await sql('--format', 'csv', q, folder)).stdout).toBe((await sql('--csv', q, folder)).stdout);
    expect((await sql('--format', 'json', q, folder)).stdout).toBe((await sql('--json', q, folder)).stdout);
    expect((await sql('--format=table', q, folder)).stdout).toBe((await sql(q, folder)).stdout);
    expect((await sql('--format', 'xml', q, folder)).code).toBe(2);
    const dir = mkdtempSync(join(tmpdir(), 'smx-out-'));
    const file = join(dir, 'cpus.csv');
    const w = await sql('--format', 'csv', '--output', file, q, folder);
    expect([w.code, w.stdout, w.stderr]).toEqual([0, '', '']);
    expect(readFileSync(file, 'utf8')).toBe((await sql('--csv', q, folder)).stdout);
    // a failed query leaves no file and no temporary one
    const bad = await sql('--output', join(dir, 'bad.txt'), 'SELECT nope FROM events', folder);
    expect(bad.code).toBe(1);
    expect(readdirSync(dir)).toEqual(['cpus.csv']);
  }, 60_000);

  it('formats a table: numbers right, text left, NULL for null', () => {
    const t = formatTable({
      columns: [
        { name: 'task', type: 'VARCHAR' },
        { name: 'n', type: 'BIGINT' },
      ],
      rows: [
        ['bash', 12],
        ['kworker/0:1', null],
      ],
    });
    expect(t).toBe(['task            n', '-----------  ----', 'bash           12', 'kworker/0:1  NULL', '(2 rows)', ''].join('\n'));
  });

  it('streams a big result: the default limit cuts it and says so, --all prints every row (issue 18.10)', async () => {
    const q = 'SELECT range AS x FROM range(200000)';
    // the second method: DuckDB's own count of the same query
    const counted = JSON.parse((await sql(`SELECT count(*) AS n FROM (${q})`, '--json', folder)).stdout).rows[0][0];
    expect(counted).toBe(200000);
    // before: "Maximum call stack size exceeded" (every row spread into Math.max)
    const cut = await sql(q, folder);
    expect([cut.code, cut.stderr]).toEqual([0, '']);
    const lines = cut.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(2 + DEFAULT_LIMIT + 1);
    expect(lines.slice(0, 4)).toEqual(['  x', '---', '  0', '  1']);
    expect(lines.at(-2)).toBe('999');
    expect(lines.at(-1)).toBe(`(1000 of ${counted} rows shown, ${counted - 1000} cut: --limit N or --all prints more)`);
    const all = await sql(q, '--all', folder);
    expect([all.code, all.stderr]).toEqual([0, '']);
    const body = all.stdout.trimEnd().split('\n').slice(2, -1);
    expect(body.length).toBe(counted);
    // the widths come from the first 1,000 rows: later, longer numbers are printed whole
    expect(body.slice(998, 1001)).toEqual(['998', '999', '1000']);
    expect(body.at(-1)).toBe('199999');
    expect(all.stdout.trimEnd().split('\n').at(-1)).toBe(`(${counted} rows)`);
    // --limit N, and --json with a limit: "total" and a line on stderr
    const five = await sql(q, '--limit', '5', folder);
    expect(five.stdout.trimEnd().split('\n').slice(2)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      `(5 of ${counted} rows shown, ${counted - 5} cut: --limit N or --all prints more)`,
    ]);
    const j = await sql('SELECT range AS x FROM range(2500)', '--json', '--limit', '3', folder);
    expect(j.stdout).toBe('{"columns":[{"name":"x","type":"BIGINT"}],"rows":[[0],[1],[2]],"total":2500}\n');
    expect(j.stderr).toBe('3 of 2500 rows printed, 2497 cut: --limit N or --all prints more\n');
    expect((await sql(q, '--limit', 'x', folder)).code).toBe(2);
    expect((await sql(q, '--limit', '5', '--all', folder)).code).toBe(2);
  }, 60_000);

  it('holds one chunk at a time: rows arrive in chunks of at most 2,048, those not wanted are only counted', async () => {
    let most = 0;
    let got = 0;
    let columns: string[] = [];
    const total = await streamQuery(tablesIn(folder), 'SELECT range AS x, range * 2 AS y FROM range(100000)', {
      columns: (c) => void (columns = c.map((x) => `${x.name} ${x.type}`)),
      wanted: () => 10000 - got,
      rows: (r) => {
        most = Math.max(most, r.length);
        // each row converted as DuckDB computed it
        for (const [x, y] of r) if (y !== 2 * (x as number)) throw new Error(`row ${String(x)}: ${String(y)}`);
        got += r.length;
      },
      stopped: () => false,
    });
    expect(columns).toEqual(['x BIGINT', 'y BIGINT']);
    expect(total).toBe(100000);
    expect(got).toBe(10000);
    expect(most).toBeLessThanOrEqual(2048);
  }, 30_000);
});

// issue 34 (what an adversary broke): paths DuckDB globs, file access a query should not have,
// --output onto what is not a regular file, and write errors that crashed with a stack
describe('cli sql, issue 34', () => {
  /** the CLI as a process whose stdout is the file `stdout` (opened here), as a shell's `> FILE` does */
  const cliTo = (stdout: string, ...args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const fd = openSync(stdout, 'w');
      const child = spawn(...cliArgv(...args), { stdio: ['ignore', fd, 'pipe'] });
      closeSync(fd);
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });

  it('10: a folder named cap[12] is its own capture, not a glob matching cap1', async () => {
    const base = mkdtempSync(join(tmpdir(), 'smx-glob-'));
    // cap[12]: the sample trace's first 1,500 lines, a capture other than cap1's whole trace
    const part = join(base, 'trace');
    writeFileSync(
      part,
      readFileSync(SAMPLES + 'trace', 'utf8')
        .split('\n')
        .slice(0, 1500)
        .join('\n') + '\n',
    );
    const io = captureOutput();
    expect(await exportCommand(['--parquet', join(base, 'cap1'), SAMPLES + 'trace'])).toBe(0);
    expect(await exportCommand(['--parquet', join(base, 'cap[12]'), part])).toBe(0);
    // and the layout by capture: a table's folder lists its files, no pattern either
    expect(await exportCommand(['--parquet', join(base, 'c*'), part])).toBe(0);
    expect(await exportCommand(['--parquet', join(base, 'c*'), SAMPLES + 'stack_map_bin.gen1', part])).toBe(0);
    vi.restoreAllMocks();
    void io;
    // the second method: summary's count of each folder's input
    const own = summarize((await readFiles([part])).capture).events;
    const whole = summarize((await readFiles([SAMPLES + 'trace'])).capture).events;
    expect(own).not.toBe(whole);
    const count = async (dir: string) => {
      const r = await sql('--csv', 'SELECT count(*) FROM events', dir);
      expect([r.code, r.stderr]).toEqual([0, '']);
      return Number(r.stdout.split('\r\n')[1]);
    };
    expect(await count(join(base, 'cap[12]'))).toBe(own);
    expect(await count(join(base, 'cap1'))).toBe(whole);
    expect(await count(join(base, 'c*'))).toBe(2 * own);
  }, 60_000);

  it("19: a query reaches the capture's tables and no other file; --allow-external-access lifts it", async () => {
    // DuckDB itself (a connection of the test's own) says what read_text gives the file
    expect((await sql('SELECT count(*) FROM events', folder)).code).toBe(0);
    const read = await sql('--csv', "SELECT content FROM read_text('/etc/hostname')", folder);
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/Permission Error: Cannot access file "\/etc\/hostname"/);
    // the tables still answer in the same run, and a capture read from files (a scratch folder) is closed too
    const both = await sql('--csv', "SELECT (SELECT count(*) FROM events) AS n; SELECT * FROM read_csv('/etc/passwd')", folder);
    expect(both.code).toBe(1);
    expect(both.stdout).toBe(`n\r\n${summary.events}\r\n`);
    expect((await sql("SELECT * FROM read_text('/etc/hostname')", SAMPLES + 'trace')).stderr).toMatch(/Permission Error/);
    // a write: elsewhere refused by DuckDB, onto the tables' own files refused before it runs
    const dir = mkdtempSync(join(tmpdir(), 'smx-ext-'));
    const w = await sql(`COPY (SELECT 1) TO '${join(dir, 'x.csv')}'`, folder);
    expect(w.code).toBe(1);
    const own = join(folder, 'events.parquet');
    const before = readFileSync(own);
    const over = await sql(`COPY (SELECT 1 AS a) TO '${own}' (FORMAT parquet)`, folder);
    expect([over.code, over.stderr]).toEqual([
      1,
      "statement 1: COPY writes files, and sql reaches only the capture's tables (--allow-external-access lifts that)\n",
    ]);
    expect(readFileSync(own).equals(before)).toBe(true);
    expect((await sql('SET enable_external_access = true', folder)).stderr).toMatch(/locked/);
    expect(readdirSync(dir)).toEqual([]);
    const allowed = await sql('--allow-external-access', '--json', "SELECT content FROM read_text('/etc/hostname')", folder);
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout).rows).toEqual([[readFileSync('/etc/hostname', 'utf8')]]);
    expect((await sql('--allow-external-access', `COPY (SELECT 1 AS a) TO '${join(dir, 'x.csv')}'`, folder)).code).toBe(0);
    expect(readFileSync(join(dir, 'x.csv'), 'utf8')).toBe('a\n1\n');
  }, 60_000);

  it('11: --output onto /dev/null, a FIFO, a symlink and a folder: each kept what it is', async () => {
    const q = 'SELECT cpu, count(*) AS n FROM events GROUP BY cpu ORDER BY cpu';
    const expected = (await sql('--csv', q, folder)).stdout;
    const dir = mkdtempSync(join(tmpdir(), 'smx-outkind-'));
    const devnull = statSync('/dev/null');
    // as root the rename deleted /dev/null: it stays the same character device
    expect((await sql('--csv', '-o', '/dev/null', q, folder)).code).toBe(0);
    const after = statSync('/dev/null');
    expect([after.isCharacterDevice(), after.rdev, after.ino]).toEqual([true, devnull.rdev, devnull.ino]);
    // a FIFO: written in place, read here as sql writes it
    const fifo = join(dir, 'rows.fifo');
    await exec('mkfifo', [fifo]);
    const chunks: Buffer[] = [];
    const reader = new Promise<void>((resolve, reject) =>
      createReadStream(fifo)
        .on('data', (c) => chunks.push(c as Buffer))
        .on('end', resolve)
        .on('error', reject),
    );
    const f = await sql('--csv', '-o', fifo, q, folder);
    await reader;
    expect([f.code, f.stderr]).toEqual([0, '']);
    expect(Buffer.concat(chunks).toString()).toBe(expected);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    // a symlink: its target written, the link kept; a dangling one's target made
    const target = join(dir, 'target.csv');
    writeFileSync(target, 'old');
    symlinkSync('target.csv', join(dir, 'link.csv'));
    expect((await sql('--csv', '-o', join(dir, 'link.csv'), q, folder)).code).toBe(0);
    expect(lstatSync(join(dir, 'link.csv')).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(expected);
    symlinkSync('made.csv', join(dir, 'dangling.csv'));
    expect((await sql('--csv', '-o', join(dir, 'dangling.csv'), q, folder)).code).toBe(0);
    expect([lstatSync(join(dir, 'dangling.csv')).isSymbolicLink(), readFileSync(join(dir, 'made.csv'), 'utf8')]).toEqual([true, expected]);
    // a folder: refused in one line, nothing left in it or beside it
    mkdirSync(join(dir, 'folder'));
    const before = readdirSync(dir).sort();
    const d = await sql('--csv', '-o', join(dir, 'folder'), q, folder);
    expect([d.code, d.stdout, d.stderr]).toEqual([1, '', `cannot write ${join(dir, 'folder')}: it is a folder (give a file name in it)\n`]);
    expect([readdirSync(dir).sort(), readdirSync(join(dir, 'folder'))]).toEqual([before, []]);
  }, 60_000);

  it('16: a full device (/dev/full) as stdout or --output: one line naming it, exit 1, no temporary file', async () => {
    const q = 'SELECT * FROM range(100000)';
    const out = await cliTo('/dev/full', 'sql', '--csv', q, folder);
    expect([out.code, out.stderr]).toEqual([1, 'cannot write standard output: ENOSPC: no space left on device, write\n']);
    const o = await sql('--csv', '-o', '/dev/full', q, folder);
    expect([o.code, o.stdout, o.stderr]).toEqual([1, '', 'cannot write /dev/full: ENOSPC: no space left on device, write\n']);
    // a full disk under a regular file: a symlink whose target is /dev/full is written in place too
    const dir = mkdtempSync(join(tmpdir(), 'smx-full-'));
    symlinkSync('/dev/full', join(dir, 'full'));
    const l = await sql('--csv', '-o', join(dir, 'full'), q, folder);
    expect([l.code, l.stderr]).toEqual([1, `cannot write ${join(dir, 'full')}: ENOSPC: no space left on device, write\n`]);
    expect(readdirSync(dir)).toEqual(['full']);
    // summary's output too (main.ts watches stdout for every command)
    const s = await cliTo('/dev/full', 'summary', SAMPLES + 'trace');
    expect([s.code, s.stderr]).toEqual([1, 'cannot write standard output: ENOSPC: no space left on device, write\n']);
  }, 60_000);

  it('16: a dangling symlink named events in an export folder: sql reads the folder, export says what is in the way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smx-dangle-'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'events'));
    const io = captureOutput();
    // flat: the link is beside events.parquet, in no one's way
    expect(await exportCommand(['--parquet', dir, SAMPLES + 'trace'])).toBe(0);
    vi.restoreAllMocks();
    void io;
    const r = await sql('--csv', 'SELECT count(*) FROM events', dir);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `count_star()\r\n${summarize((await readFiles([SAMPLES + 'trace'])).capture).events}\r\n`, '']);
    // a second capture needs the folder events/: the link is in the way, said in one line, the first capture put back
    const flat = readdirSync(dir).sort();
    const e = captureOutput();
    const code = await exportCommand(['--parquet', dir, SAMPLES + 'trace', SAMPLES + 'kallsyms']);
    vi.restoreAllMocks();
    expect([code, e.err.join('')]).toEqual([1, `export to ${dir} failed: ${join(dir, 'events')} is in the way of a folder: a symbolic link to nothing\n`]);
    expect(readdirSync(dir).sort()).toEqual(flat);
  }, 60_000);
});
