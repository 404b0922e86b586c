import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { fileWriter, parquetWriteBuffer } from 'hyparquet-writer';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Explorer } from '../core/query/explorer.ts';
import { handCapture } from '../core/testing/explorer-fixtures.ts';
import { summarize, type Summary } from '../core/capture/summary.ts';
import { Ingest } from '../core/capture/ingest.ts';
import { buildTables } from '../core/tables/build.ts';
import { cellAt, TABLE_NAMES } from '../core/tables/schema.ts';
import { footerKeyValues, parquetKeyValues, readFooter, type FooterRead } from '../core/tables/parquet-footer.ts';
import { writeParquet } from '../core/tables/parquet.ts';
import { exportCommand } from './export.ts';
import { captureIdOfPaths, footerCaptureId, parquetCaptureId } from './export-folder.ts';
import { writeCapture } from './generate-capture.ts';
import { DEFAULT_GENERATE } from './generate.ts';
import { readFiles } from './read-files.ts';
import { captureOutput } from './test-io.ts';
import { realIt, realTrace, realTracePath } from '../core/testing/real-traces.ts';
import { hasTraceCmd, reportLines } from '../core/testing/trace-dat.ts';

afterEach(() => vi.restoreAllMocks());

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const SAMPLE = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'stack_map.gen3', 'stack_map_stat', 'kallsyms'].map(
  (f) => SAMPLES + f,
);

async function run(args: string[]) {
  const io = captureOutput();
  const code = await exportCommand(args);
  vi.restoreAllMocks();
  return { code, out: io.out.join(''), err: io.err.join('') };
}

let generated: string[];
let db: DuckDBInstance;
let con: DuckDBConnection;
/** extensions DuckDB has loaded before any file is read */
let atStart: string[] = [];
const tmp = (p: string) => mkdtempSync(join(tmpdir(), `smx-export-${p}-`));

beforeAll(async () => {
  const out = tmp('gen');
  // a v7 capture (ids, unverified) beside the sample's v8 cookies
  const report = writeCapture({ ...DEFAULT_GENERATE, out, events: 3000, mb: null, mode: 'v7', stacks: 300, seed: 7, json: false });
  generated = report.files.map((f) => join(out, f.name));
  db = await DuckDBInstance.create(':memory:');
  con = await db.connect();
  atStart = (await rows('SELECT extension_name FROM duckdb_extensions() WHERE loaded')).map((r) => String(r.extension_name));
  // what a fleet user's DuckDB needs: Parquet alone (nothing installed or loaded on the way)
  await con.run('SET autoinstall_known_extensions = false; SET autoload_known_extensions = false');
});
afterAll(() => {
  con?.closeSync();
  db?.closeSync();
});

const rows = async (sql: string) => (await con.runAndReadAll(sql)).getRowObjectsJS();
const num = (v: unknown) => Number(v);

/** summary --json's counts, asked of the folder with DuckDB, for one capture_id */
async function countsInFolder(dir: string, id: string) {
  const t = (name: string) => `read_parquet('${dir}/${name}/*.parquet')`;
  const where = `WHERE capture_id = '${id}'`;
  const [r] = await rows(`SELECT
      (SELECT count(*) FROM ${t('events')} ${where}) AS events,
      count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8')) AS cookies,
      count(*) FILTER (WHERE status = 'full') AS fullStacks,
      count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8') AND status IN ('resolved', 'unverified')) AS resolved,
      count(*) FILTER (WHERE kind IN ('cookie-v7', 'cookie-v8') AND status NOT IN ('resolved', 'unverified')) AS unresolved,
      (SELECT count(*) FROM ${t('stacks')} ${where}) AS uniqueStacks,
      (SELECT max(n) FROM (SELECT count(*) n FROM ${t('records')} ${where} AND stack_hash IS NOT NULL GROUP BY stack_hash)) AS top0
    FROM ${t('records')} ${where}`);
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, num(v)]));
}
const fromSummary = (s: Summary) => ({
  events: s.events,
  cookies: s.cookies,
  fullStacks: s.fullStacks,
  resolved: s.resolved,
  unresolved: s.unresolved,
  uniqueStacks: s.uniqueStacks,
  top0: s.top[0].count,
});

/** FNV-1a 64 as its definition gives it, in BigInt: a second implementation of the digest */
function fnv1a64(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

describe('readFiles digests', () => {
  it('are taken as the load reads each file once: whole files, an unknown one it stops reading after its sniff, a gzip, a trace read in two pieces', async () => {
    const dir = tmp('digest');
    const junk = join(dir, 'junk.bin');
    const bytes = new Uint8Array(200_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    writeFileSync(junk, bytes);
    const gz = join(dir, 'stack_map_stat.gz');
    writeFileSync(gz, gzipSync(readFileSync(SAMPLES + 'stack_map_stat')));
    const files = [...SAMPLE, junk, gz];
    const streams = vi.spyOn(Blob.prototype, 'stream');
    try {
      for (const partMinBytes of [undefined, 4096]) {
        streams.mockClear();
        const { sources } = await readFiles(files, { digests: true, partMinBytes });
        expect(sources.map((x) => x.digest)).toEqual(files.map((f) => fnv1a64(readFileSync(f))));
        // one stream per file read by the load, one more for the rest of the file the load left
        // (the unknown one) and, read in two pieces, for the second piece
        expect(streams.mock.calls.length).toBeLessThanOrEqual(files.length + 2);
      }
    } finally {
      streams.mockRestore();
    }
  }, 60_000);
});

describe('cli export --parquet', () => {
  it('the captures table: one row per capture, its files as given with sizes and digests, the label; written last', async () => {
    const dir = join(tmp('captures'), 'out');
    const a = await run(['--parquet', dir, '--label', 'pixel-7 build 42', '--json', ...SAMPLE]);
    expect([a.code, a.err]).toEqual([0, '']);
    const ja = JSON.parse(a.out);
    expect(ja.tables.at(-1).table).toBe('captures');
    const [row] = await rows(`SELECT * FROM read_parquet('${dir}/captures.parquet')`);
    const s = summarize((await readFiles(SAMPLE)).capture);
    expect(row).toMatchObject({
      capture_id: ja.captureId,
      label: 'pixel-7 build 42',
      exported_by: expect.stringMatching(/^stackmap-explorer \d+\.\d+\.\d+/),
      host: null,
      kernel_release: null,
    });
    expect([num(row.events), num(row.records), num(row.source_count)]).toEqual([s.events, s.cookies + s.fullStacks + s.userStacks, SAMPLE.length]);
    // the paths as given, the sizes as the file system says, the digests by a second implementation
    const want = SAMPLE.map((f) => ({ path: f, size: statSync(f).size, digest: fnv1a64(readFileSync(f)) }));
    expect(JSON.parse(String(row.sources))).toEqual(want);
    expect(num(row.source_bytes)).toBe(want.reduce((n, f) => n + f.size, 0));
    // every other table's rows carry the id the captures row has
    for (const t of TABLE_NAMES) expect(parquetCaptureId(join(dir, `${t}.parquet`))).toBe(row.capture_id);
  }, 60_000);

  it('writes two captures into one folder; DuckDB counts per capture_id equal each summary', async () => {
    const dir = join(tmp('fleet'), 'out');
    const a = await run(['--parquet', dir, '--json', ...SAMPLE]);
    expect([a.code, a.err]).toEqual([0, '']);
    const ja = JSON.parse(a.out);
    expect(ja.layout).toBe('flat');
    expect(ja.tables.map((t: { table: string }) => t.table)).toEqual([...TABLE_NAMES]);
    for (const t of TABLE_NAMES) expect(parquetCaptureId(join(dir, `${t}.parquet`))).toBe(ja.captureId);

    const b = await run(['--parquet', dir, '--json', ...generated]);
    expect(b.code).toBe(0);
    const jb = JSON.parse(b.out);
    expect(jb.captureId).not.toBe(ja.captureId);
    expect([jb.layout, jb.converted]).toEqual(['folders', ja.captureId]);
    // the flat files were moved, and it says so
    expect(b.err).toContain(`moved to ${dir}/<table>/${ja.captureId}.parquet`);
    expect(readdirSync(dir).sort()).toEqual([...TABLE_NAMES].sort());
    for (const t of TABLE_NAMES) expect(readdirSync(join(dir, t)).sort()).toEqual([`${ja.captureId}.parquet`, `${jb.captureId}.parquet`].sort());

    const ids = await rows(`SELECT capture_id, count(*) n FROM read_parquet('${dir}/events/*.parquet') GROUP BY 1 ORDER BY 1`);
    expect(ids.map((r) => r.capture_id).sort()).toEqual([ja.captureId, jb.captureId].sort());
    for (const [id, files] of [
      [ja.captureId, SAMPLE],
      [jb.captureId, generated],
    ] as const) {
      const s = summarize((await readFiles([...files])).capture);
      expect(await countsInFolder(dir, id)).toEqual(fromSummary(s));
    }
    // stacks shared by name: the same stack has the same hash in both (kernel-symbols.ts's real call chains)
    const [{ n }] = await rows(`SELECT count(*) n FROM read_parquet('${dir}/stacks/*.parquet')`);
    expect(num(n)).toBeGreaterThan(0);
    // no extension beyond Parquet was loaded to read them (autoloading is off: one needed would have failed the reads)
    const loaded = (await rows(`SELECT extension_name FROM duckdb_extensions() WHERE loaded`)).map((r) => String(r.extension_name));
    expect(loaded.filter((e) => e !== 'parquet' && !atStart.includes(e))).toEqual([]);

    // the same capture again: its files are replaced, nothing else moves
    const again = await run(['--parquet', dir, '--json', ...SAMPLE]);
    expect([again.code, JSON.parse(again.out).layout, JSON.parse(again.out).converted]).toEqual([0, 'folders', null]);
    expect(readdirSync(join(dir, 'events')).length).toBe(2);
  }, 60_000);

  it('every cell of every table reads back from Parquet as cellAt gives it (hand capture)', async () => {
    const dir = tmp('cells');
    const c = handCapture();
    for (const t of buildTables(new Explorer(c), { captureId: 'cap' })) {
      const file = join(dir, `${t.spec.name}.parquet`);
      // tiny row groups: the cells cross group boundaries
      await writeParquet(t, fileWriter(file), { captureId: 'cap', rowGroup: 3 });
      const back = (await con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`)).getRowsJS();
      // int64 as DuckDB gives it, a bigint, and as cellAt does (a number, or a bigint for ts_ns): compared as decimal text
      const plain = (v: unknown) => (typeof v === 'bigint' || typeof v === 'number' ? String(v) : v);
      const expected = Array.from({ length: t.rows }, (_, i) => t.columns.map((col) => plain(cellAt(col, i))));
      expect(back.map((r) => r.map(plain))).toEqual(expected);
      const kv = parquetKeyValues(new Uint8Array(readFileSync(file)));
      expect(kv?.get('stackmap_explorer.table')).toBe(t.spec.name);
      expect(kv?.get('stackmap_explorer.capture_id')).toBe('cap');
      // every pair of the footer, as DuckDB reads them
      const duck = await rows(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${file}')`);
      expect(kv).toEqual(new Map(duck.map((r) => [String(r.k), String(r.v)])));
    }
  }, 30_000);

  it("two captures differing in one byte past their first 4 KiB get two ids (a trace.dat's head is a static header)", () => {
    const dir = tmp('one-byte');
    const body = readFileSync(SAMPLE[0]);
    const other = Buffer.from(body);
    other[body.length - 10] ^= 1;
    writeFileSync(join(dir, 'a'), body);
    writeFileSync(join(dir, 'b'), other);
    // the same name for both, as two machines' captures would have
    const [a, b] = ['a', 'b'].map((d) => {
      const sub = join(dir, d + '-dir');
      mkdirSync(sub);
      writeFileSync(join(sub, 'trace'), d === 'a' ? body : other);
      return join(sub, 'trace');
    });
    expect(captureIdOfPaths([a])).not.toBe(captureIdOfPaths([b]));
    expect(captureIdOfPaths([a])).toBe(captureIdOfPaths([a]));
  });

  it("refuses a folder whose flat files are not its own, and keeps summary's exit statuses", async () => {
    const dir = tmp('foreign');
    writeFileSync(join(dir, 'events.parquet'), 'not parquet');
    const r = await run(['--parquet', dir, ...SAMPLE]);
    expect(r.code).toBe(1);
    // which file, the byte and why: 'not parquet' is 11 bytes, under Parquet's 12
    expect(r.err).toContain(`${join(dir, 'events.parquet')} is no table file of this tool (byte 0: 11 bytes: too short for Parquet`);
    expect(readFileSync(join(dir, 'events.parquet'), 'utf8')).toBe('not parquet');
    expect(existsSync(join(dir, 'stacks.parquet'))).toBe(false);

    const none = tmp('none');
    const missing = await run(['--parquet', none, join(none, 'missing')]);
    expect([missing.code, readdirSync(none)]).toEqual([1, []]);
    expect((await run([SAMPLE[0]])).code).toBe(2);
    expect((await run(['--parquet', none])).code).toBe(2);
    expect((await run(['--parquet', none, '--bogus', SAMPLE[0]])).code).toBe(2);
    // a folder that cannot be made: said in one line, no stack trace (issue 23)
    const proc = await run(['--parquet', '/proc/nope', SAMPLE[0]]);
    expect(proc.code).toBe(1);
    expect(proc.err).toBe("cannot write to /proc/nope: ENOENT: no such file or directory, mkdir '/proc/nope'\n");
  }, 30_000);

  it('the footer reader never throws on damaged bytes, and finds the metadata in whole files only', async () => {
    const file = join(tmp('footer'), 'stacks.parquet');
    const [t] = buildTables(new Explorer(handCapture()), { captureId: 'cap', only: ['stacks'] });
    await writeParquet(t, fileWriter(file), { captureId: 'cap' });
    const good = new Uint8Array(readFileSync(file));
    expect(parquetKeyValues(good)?.get('stackmap_explorer.table')).toBeTruthy();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: good.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: good.length }), (at, byte, cut) => {
        const bad = good.slice(cut);
        bad[Math.min(at, bad.length - 1)] = byte;
        const kv = parquetKeyValues(bad);
        expect(kv === null || kv instanceof Map).toBe(true);
      }),
      { numRuns: 300, seed: 5 },
    );
    expect(parquetKeyValues(new Uint8Array([1, 2, 3]))).toBeNull();
  }, 30_000);

  it('a damaged footer is said with the byte it is at and why; a Parquet file of another tool has no capture_id', async () => {
    const dir = tmp('damaged');
    const file = join(dir, 'stacks.parquet');
    const [t] = buildTables(new Explorer(handCapture()), { captureId: 'cap', only: ['stacks'] });
    await writeParquet(t, fileWriter(file), { captureId: 'cap' });
    const good = new Uint8Array(readFileSync(file));
    const size = good.length;
    // the metadata's length read straight from the tail, as the format lays it out
    const len = new DataView(good.buffer, good.byteOffset).getUint32(size - 8, true);
    const [{ n }] = await rows(`SELECT count(*) n FROM parquet_kv_metadata('${file}')`);
    expect(len).toBeLessThan(size);
    const readOf = (b: Uint8Array) => (o: number, l: number) => b.subarray(o, o + l);
    const at = (b: Uint8Array): FooterRead => readFooter(b.length, readOf(b));
    const ok = at(good);
    expect('keyValues' in ok && ok.keyValues.size).toBe(num(n));

    const problemOf = (r: FooterRead) => ('problem' in r ? r.problem : null);
    expect(problemOf(at(good.subarray(0, 7)))).toEqual({ offset: 0, reason: expect.stringContaining('7 bytes: too short for Parquet') });
    const noMagic = good.slice();
    noMagic[size - 1] = 0x30;
    expect(problemOf(at(noMagic))).toEqual({ offset: size - 4, reason: expect.stringContaining('no "PAR1" at the end') });
    const lie = good.slice();
    new DataView(lie.buffer).setUint32(size - 8, size - 11, true);
    expect(problemOf(at(lie))).toEqual({
      offset: size - 8,
      reason: `the metadata's length ${size - 11} is more than the ${size - 12} bytes between the "PAR1"s`,
    });
    // the first field header of FileMetaData turned into a Thrift map, which Parquet never uses
    const badType = good.slice();
    badType[size - 8 - len] = 0x1b;
    expect(problemOf(at(badType))).toEqual({
      offset: size - 8 - len,
      reason: `the metadata (${len} bytes) is not Parquet's FileMetaData: thrift unhandled type: 11`,
    });
    // the file's real tail after 3 bytes, given as the last bytes of a file from byte 100
    const short = Uint8Array.of(1, 2, 3, ...good.subarray(size - 8));
    expect(problemOf(footerKeyValues(short, 100))).toEqual({ offset: 100 + 3, reason: `the metadata's length ${len} is more than the 3 bytes before it` });
    // a file shorter than its size said (read gives fewer bytes): said where the read came up short
    expect(problemOf(readFooter(size + 10, readOf(good)))).toEqual({
      offset: size + 2,
      reason: `the file ended before the ${size + 10} bytes it had (changed while read?)`,
    });
    expect(problemOf(readFooter(size, (o, l) => good.subarray(o, Math.min(o + l, size - 1))))).toEqual({
      offset: size - 1,
      reason: `the file ended before the ${size} bytes it had (changed while read?)`,
    });

    // a Thrift struct of version alone (field 1, i32 1: header 0x15, zigzag 2; stop 0), no schema
    const versionOnly = Uint8Array.of(0x15, 0x02, 0x00, 3, 0, 0, 0, 0x50, 0x41, 0x52, 0x31);
    expect(problemOf(footerKeyValues(versionOnly))).toEqual({
      offset: 0,
      reason: expect.stringMatching(/^the metadata \(3 bytes\) is not Parquet's FileMetaData: a field is missing or of another type \(/),
    });

    // each damaged byte of the footer is either read or said, at a byte of the file
    for (let i = size - 8 - len; i < size; i++) {
      for (const byte of [0x00, 0xff, good[i] ^ 0x10]) {
        const bad = good.slice();
        bad[i] = byte;
        const r = at(bad);
        if ('problem' in r) {
          expect(r.problem.offset).toBeGreaterThanOrEqual(0);
          expect(r.problem.offset).toBeLessThanOrEqual(size);
          expect(r.problem.reason.length).toBeGreaterThan(0);
        }
      }
    }

    // the command's reason for a file of this tool that is damaged, and for another tool's Parquet
    writeFileSync(file, badType);
    expect(footerCaptureId(file)).toEqual({
      why: `byte ${size - 8 - len}: the metadata (${len} bytes) is not Parquet's FileMetaData: thrift unhandled type: 11`,
    });
    const other = join(dir, 'events.parquet');
    writeFileSync(other, new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'x', data: [1, 2, 3], type: 'INT32' }] })));
    expect(footerCaptureId(other)).toEqual({ why: "no stackmap_explorer.capture_id in its footer's key-value metadata" });
    expect(footerCaptureId(join(dir, 'missing.parquet'))).toEqual({ why: expect.stringContaining('cannot be opened: ENOENT') });
  }, 30_000);
});

describe("cli export --parquet: each event's payload, TGID and fields", () => {
  const exportOne = async (files: string[]) => {
    const dir = join(tmp('details'), 'out');
    const r = await run(['--parquet', dir, '--json', ...files]);
    expect(r.code).toBe(0);
    return (t: string) => `read_parquet('${dir}/${t}.parquet')`;
  };
  const key = (name: string, text: string) => `${name}\u0000${text}`;
  const tally = (list: string[]) => {
    const m = new Map<string, number>();
    for (const k of list) m.set(k, (m.get(k) ?? 0) + 1);
    return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  };

  realIt.skipIf(!hasTraceCmd && !process.env.CI)(
    'a trace.dat: every payload as `trace-cmd report` prints it',
    async () => {
      if (!hasTraceCmd) throw new Error("CI is set and trace-cmd is missing: install Debian's trace-cmd, this test's peer tool");
      const file = realTracePath('trappy-trace.dat');
      const t = await exportOne([file]);
      const ours = (await rows(`SELECT event, payload FROM ${t('events')}`)).map((r) => key(String(r.event), String(r.payload)));
      const theirs = reportLines(file).map((l) => key(l.name, l.text));
      expect(ours.length).toBe(theirs.length);
      expect(tally(ours)).toEqual(tally(theirs));
    },
    60_000,
  );

  realIt(
    "a trace with a TGID column: each event's TGID and payload as a plain reading of its lines gives them",
    async () => {
      const name = 'catapult-decompressed_atrace_data.txt';
      const t = await exportOne([realTracePath(name)]);
      // the test's own reading: `comm-pid (tgid) [cpu] flags ts: name: text`, a print's text with its caller
      const expected: { tgid: number | null; payload: string }[] = [];
      for (const line of new TextDecoder().decode(realTrace(name)).split('\n')) {
        const m = /^\s*.+?-\d+\s+\(\s*([\d-]+)\)\s+\[\d+\]\s+\S+\s+\d+\.\d+: ([\w.]+): (.*)$/.exec(line);
        if (!m) continue;
        expected.push({ tgid: m[1].startsWith('-') ? null : Number(m[1]), payload: m[2] === 'tracing_mark_write' ? `${m[2]}: ${m[3]}` : m[3] });
      }
      const got = (await rows(`SELECT tgid, payload FROM ${t('events')} ORDER BY event_id`)).map((r) => ({
        tgid: r.tgid === null ? null : num(r.tgid),
        payload: String(r.payload),
      }));
      // (this one prints `(-----)` on most lines, a TGID on four)
      expect([expected.filter((e) => e.tgid !== null).length, expected.length]).toEqual([4, 1042]);
      expect(got).toEqual(expected);
    },
    60_000,
  );

  it('frames.module: the module kallsyms names for a function, and the one a printed frame names, read in any chunk size', async () => {
    const t = await exportOne(SAMPLE);
    // the test's own reading of kallsyms: `ADDR t NAME [module]`
    const want = new Map<string, string>();
    for (const line of readFileSync(SAMPLES + 'kallsyms', 'utf8').split('\n')) {
      const m = /^[0-9a-f]+ [tTwW] (\S+)\s+\[(\S+)\]$/.exec(line);
      if (m) want.set(m[1], m[2]);
    }
    const got = await rows(`SELECT symbol, any_value(module) AS module, count(*) AS n, count(module) AS known FROM ${t('frames')} GROUP BY symbol`);
    expect(got.filter((r) => r.module !== null).length).toBeGreaterThan(3);
    for (const r of got)
      expect([r.symbol, r.module, num(r.known)]).toEqual([r.symbol, want.get(String(r.symbol)) ?? null, want.has(String(r.symbol)) ? num(r.n) : 0]);
    // a full stack printed with a module, in a trace cut into 1-7 byte chunks: the same module
    const dir = tmp('module');
    const trace = join(dir, 'unknown');
    writeFileSync(
      trace,
      [
        '# tracer: nop',
        '  cat-1 [000] ...1. 1.000001: kmem_cache_alloc: bytes_alloc=8',
        '  cat-1 [000] ...1. 1.000001: <stack trace>',
        ' => ext4_map_blocks+0x10/0x200 [ext4]',
        ' => vfs_read+0x9/0x10',
        '',
      ].join('\n'),
    );
    expect([...((await readFiles([trace])).capture.modules ?? [])]).toEqual([['ext4_map_blocks', 'ext4']]);
    const bytes = readFileSync(trace);
    for (const size of [1, 3, 7]) {
      const session = new Ingest();
      const parser = session.open('unknown');
      for (let at = 0; at < bytes.length; at += size) parser.push(bytes.subarray(at, at + size));
      parser.end();
      expect([...(session.finish().modules ?? [])], `chunks of ${size}`).toEqual([['ext4_map_blocks', 'ext4']]);
      // a file read and then rolled back (a cancelled Add) leaves no module behind
      const mark = session.mark();
      const more = session.open('kallsyms');
      more.push(new TextEncoder().encode('ffffffffc0a01280 t e1000_intr\t[e1000]\n'));
      more.end();
      session.rollback(mark);
      expect([...(session.finish().modules ?? [])]).toEqual([['ext4_map_blocks', 'ext4']]);
    }
  }, 60_000);

  it('the sample: args holds every key=value of every payload, bytes_alloc summed as grep and a sum would', async () => {
    const t = await exportOne(SAMPLE);
    const text = readFileSync(SAMPLES + 'trace', 'utf8');
    let bytes = 0;
    let allocs = 0;
    for (const m of text.matchAll(/ bytes_alloc=(\d+) /g)) {
      bytes += Number(m[1]);
      allocs++;
    }
    const [r] = await rows(`SELECT count(*) AS n, sum(int_value) AS bytes FROM ${t('args')} WHERE key = 'bytes_alloc'`);
    expect([num(r.n), num(r.bytes)]).toEqual([allocs, bytes]);
    // a field's event is the event whose payload holds it
    const [bad] = await rows(
      `SELECT count(*) AS n FROM ${t('args')} a JOIN ${t('events')} e USING (event_id) WHERE position(a.key || '=' || a.value IN e.payload) = 0`,
    );
    expect(num(bad.n)).toBe(0);
    // the sample prints no TGID column
    const [tg] = await rows(`SELECT count(tgid) AS n FROM ${t('events')}`);
    expect(num(tg.n)).toBe(0);
  }, 60_000);
});
