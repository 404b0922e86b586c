// --filter held to trace-cmd's -F: on the simulator's trace.dat and the real trappy-trace.dat,
// `summary --filter F` counts as many events as `trace-cmd report -F F` prints event lines (its
// stack_id and kernel_stack lines are stack records here, not events), `sql --filter F` as many
// rows of events, and `top --json --filter F` per stack the stack records trace-cmd prints after
// the kept events (resolved here through the dumps' text and kallsyms); a filter trace-cmd
// refuses (or crashes on) is refused; on text traces the counts equal a regex over the lines;
// export --parquet --filter holds exactly those events (DuckDB counts them).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgv } from './test-io.ts';
import { summarize } from '../core/capture/summary.ts';
import { EventFilter } from '../core/capture/event-filter.ts';
import { FilterError } from '../core/capture/event-filter-parse.ts';
import { realIt, realTracePath } from '../core/testing/real-traces.ts';
import { hasTraceCmd } from '../core/testing/trace-dat.ts';
import { readFiles } from './read-files.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SAMPLES = join(ROOT, 'public', 'samples');
const cli = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(...cliArgv(...args), { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
/** trace-cmd report -F ... FILE: its event lines (not stack_id or kernel_stack, not `cpus=`, not a stack's `=>` lines), or null when it refuses or crashes */
const reportOnce = (file: string, filters: string[]) =>
  new Promise<number | null>((resolve) =>
    execFile('trace-cmd', ['report', ...filters.flatMap((f) => ['-F', f]), file], { encoding: 'utf8', maxBuffer: 1 << 28 }, (err, stdout, stderr) => {
      if (err || /Failed to create event filter/.test(stderr)) return resolve(null);
      let n = 0;
      for (const line of stdout.split('\n')) {
        const m = /^.*\[\d+\]\s+\d+\.\d+:\s+([^\s:]+):/.exec(line);
        if (m && m[1] !== 'stack_id' && m[1] !== 'kernel_stack') n++;
      }
      resolve(n);
    }),
  );
/**
 * reportOnce, run again when it printed no event: trace-cmd has printed none for trappy-trace.dat
 * once in a loaded fresh clone's CI (here and in trace-dat.test, testing/trace-dat.ts reportLines),
 * where every other run printed them; a filter that matches nothing prints none twice.
 */
const reportEvents = async (file: string, filters: string[]) => {
  const n = await reportOnce(file, filters);
  return n === 0 ? reportOnce(file, filters) : n;
};
/**
 * trace-cmd report -F ... -F stack_id -F kernel_stack FILE: the stack record that follows each
 * event the filters keep, on its CPU at its timestamp (the record filters ORed in so that they
 * print beside the kept events), resolved here: a `<stack_id ID gen G>` through the text dumps'
 * blocks (`frames`; one the dumps lack is not counted, as its slot is not known), a full stack's
 * `=> sym (addr)` (or `=> addr`) lines through kallsyms to `sym+0xoff`. Per stack (frames leaf first joined by
 * `;`) its records, and how many records followed a kept event.
 */
const reportStacks = (file: string, filters: string[], frames: Map<string, string>, kallsyms: string) => {
  const syms = kallsyms
    .split('\n')
    .map((l) => /^([0-9a-f]+) \w (\S+)/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ at: BigInt(`0x${m[1]}`), name: m[2] }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  /** `sym+0xoff` of an address, through kallsyms; `name`: the symbol trace-cmd named it by (it prints the address alone where its own table has none) */
  const site = (addr: string, name: string | undefined) => {
    const at = BigInt(`0x${addr}`);
    const sym = syms.filter((x) => x.at <= at).pop();
    expect(sym, `${addr} in kallsyms`).toBeDefined();
    if (name !== undefined) expect(sym!.name, `${name} at ${addr} in kallsyms`).toBe(name);
    return `${sym!.name}+0x${(at - sym!.at).toString(16)}`;
  };
  return new Promise<{ stacks: Map<string, number>; records: number }>((resolve, reject) =>
    execFile(
      'trace-cmd',
      ['report', ...[...filters, 'stack_id', 'kernel_stack'].flatMap((f) => ['-F', f]), file],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
      (err, stdout) => {
        if (err) return reject(err);
        const pending = new Map<string, string>();
        const stacks = new Map<string, number>();
        const add = (k: string) => stacks.set(k, (stacks.get(k) ?? 0) + 1);
        let records = 0;
        let full: string[] | null = null;
        for (const line of stdout.split('\n')) {
          const f = /^=> (?:(\S+) \(([0-9a-f]+)\)|([0-9a-f]+))$/.exec(line);
          if (f && full) {
            full.push(site(f[2] ?? f[3], f[1]));
            continue;
          }
          if (full) add(full.join(';'));
          full = null;
          const m = /^.*\[(\d+)\]\s+(\d+\.\d+):\s+([^\s:]+):\s+(.*)$/.exec(line);
          if (!m) continue;
          const [, cpu, ts, name, rest] = m;
          if (name !== 'stack_id' && name !== 'kernel_stack') {
            pending.set(cpu, ts);
            continue;
          }
          const mine = pending.get(cpu) === ts;
          pending.delete(cpu);
          if (!mine) continue;
          records++;
          const id = /^<stack_id (\d+) gen (\d+)>$/.exec(rest);
          if (name === 'kernel_stack') full = [];
          else if (id && frames.has(`${id[1]}/${id[2]}`)) add(frames.get(`${id[1]}/${id[2]}`)!);
        }
        if (full) add(full.join(';'));
        resolve({ stacks, records });
      },
    ),
  );
};
/** the simulator's text dumps (stack_map.N) read with a regex: `ID/G` to its frames `sym+0xoff`, leaf first, joined by `;` */
const dumpFrames = (files: string[]) => {
  const stacks = new Map<string, string>();
  for (const f of files.filter((x) => /\/stack_map\.\d+$/.test(x)))
    for (const block of readFileSync(f, 'utf8').split(/\n\n+/)) {
      const m = /^stack_id (\d+) gen (\d+) \[/.exec(block);
      if (m) stacks.set(`${m[1]}/${m[2]}`, [...block.matchAll(/^ => (\S+?)\/0x[0-9a-f]+(?: \[\w+\])?$/gm)].map((x) => x[1]).join(';'));
    }
  return stacks;
};
const ours = async (files: string[], filters: string[]) => {
  const { capture } = await readFiles(files, { filter: EventFilter.parse(filters) });
  return summarize(capture, 10);
};
const refused = (filters: string[]) => {
  try {
    EventFilter.parse(filters);
    return false;
  } catch (e) {
    if (e instanceof FilterError) return true;
    throw e;
  }
};

const needTraceCmd = !hasTraceCmd && !!process.env.CI;
let dir = '';
let sim: string[] = [];
let dat = '';

/** filters on the simulator's kmem_cache_alloc trace.dat (stack_id cookies, 3 trace_marker prints) */
const SIM_FILTERS: string[][] = [
  ['kmem_cache_alloc'],
  ['kmem'],
  ['kmem/kmem_cache_alloc'],
  ['KMEM_.*'],
  ['k.*'],
  ['ftrace/print'],
  ['kmem_cache_alloc\\|print'],
  ['kmem_cache_alloc,print'],
  ['kmem_cache_alloc: bytes_alloc == 512'],
  ['kmem_cache_alloc: bytes_alloc != 512'],
  ['kmem_cache_alloc: bytes_alloc > 256'],
  ['kmem_cache_alloc: bytes_alloc >= 0x200'],
  ['kmem_cache_alloc: bytes_alloc <= 0400'],
  ['kmem_cache_alloc: bytes_req < 200'],
  ['kmem_cache_alloc: bytes_alloc & 256'],
  ['kmem_cache_alloc: bytes_alloc | 0'],
  ['kmem_cache_alloc: bytes_alloc ^ 512'],
  ['kmem_cache_alloc: bytes_alloc + 0'],
  ['kmem_cache_alloc: bytes_alloc - 512'],
  ['kmem_cache_alloc: bytes_alloc * 0'],
  ['kmem_cache_alloc: bytes_alloc / 512'],
  ['kmem_cache_alloc: bytes_alloc % 3'],
  ['kmem_cache_alloc: gfp_flags == 0x820'],
  ['kmem_cache_alloc: gfp_flags & 0x20'],
  ['kmem_cache_alloc: call_site > 0'],
  ['kmem_cache_alloc: ptr & 1'],
  ['kmem_cache_alloc: ptr > 0xffff888080000000'],
  ['kmem_cache_alloc: node == -1'],
  ['kmem_cache_alloc: node < 0'],
  ['kmem_cache_alloc: COMM == "kworker/u8:2"'],
  ["kmem_cache_alloc: COMM != 'sh'"],
  ['kmem_cache_alloc: COMM =~ "KW.*U8"'],
  ['kmem_cache_alloc: COMM !~ "^system"'],
  ['kmem_cache_alloc: COMM =~ "u8\\+"'],
  ['kmem_cache_alloc: COMM =~ "u8+"'],
  ['kmem_cache_alloc: call_site =~ "init"'],
  ['kmem_cache_alloc: call_site == "init_file"'],
  ['kmem_cache_alloc: bytes_alloc == "0x200"'],
  ['kmem_cache_alloc: bytes_alloc =~ "0"'],
  ['print: ip =~ "tracing"'],
  ['kmem_cache_alloc: common_pid == 88'],
  ['kmem_cache_alloc: CPU < 2'],
  ['kmem_cache_alloc: TGID == 88'],
  ['kmem_cache_alloc: nosuch == 1'],
  ['kmem_cache_alloc: !(nosuch == 1)'],
  ['kmem_cache_alloc: !bytes_alloc == 512'],
  ['kmem_cache_alloc: CPU == 1 || bytes_alloc == 512 && CPU == 2'],
  ['kmem_cache_alloc: bytes_alloc == 512 && (CPU == 1 || CPU == 2) && !(bytes_req < 300)'],
  ['kmem_cache_alloc: bytes_alloc & 256 && CPU == 1'],
  ['kmem_cache_alloc: CPU == 0 || bytes_alloc % 3 && gfp_flags & 0x20'],
  ['kmem_cache_alloc : bytes_alloc==512'],
  ['kmem_cache_alloc: CPU == 1', 'kmem_cache_alloc: CPU == 2'],
  ['print', 'kmem_cache_alloc: bytes_alloc > 512'],
];

/** filters trace-cmd refuses or crashes on (checked here), refused by the parser too */
const REFUSED = [
  'kmem_cache_alloc: bytes_alloc & 256 == 256',
  'kmem_cache_alloc: bytes_alloc + 1 > 256',
  'kmem_cache_alloc: bytes_alloc == 512 & 1',
  'kmem_cache_alloc: bytes_req != bytes_alloc',
  'kmem_cache_alloc: 512 == bytes_alloc',
  'kmem_cache_alloc: COMM > "a"',
  'kmem_cache_alloc: bytes_alloc = 3',
  'kmem_cache_alloc: COMM ~= "x"',
  'kmem_cache_alloc: common_pid',
  'kmem_cache_alloc:',
  'kmem_cache_alloc: ()',
  ':bytes_alloc > 1',
  'kmem_cache_alloc: ((bytes_alloc == 512',
  'kmem_cache_alloc: bytes_alloc == 512)',
  'kmem_cache_alloc: bytes_alloc ==',
  'kmem_cache_alloc: bytes_alloc == 512 &&',
  'kmem_cache_alloc: COMM == "kworker',
  'kmem_cache_alloc: bytes_alloc / 0',
];

describe.skipIf(!hasTraceCmd && !needTraceCmd)('--filter against trace-cmd report -F', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smx-filter-'));
    const r = await cli(['simulate', '--mode', 'v8', '--format', 'trace-dat', '--events', '4000', '--seed', '5', '--out', join(dir, 'v8')]);
    expect(r.code, r.stderr).toBe(0);
    sim = readdirSync(join(dir, 'v8')).map((f) => join(dir, 'v8', f));
    dat = join(dir, 'v8', 'trace.dat');
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const half = Math.ceil(SIM_FILTERS.length / 2);
  it.each([
    ['first', SIM_FILTERS.slice(0, half)],
    ['second', SIM_FILTERS.slice(half)],
  ])(
    `${SIM_FILTERS.length} filters (the %s half) count the events trace-cmd prints, on the simulator's trace.dat`,
    async (_, filters) => {
      const seen: string[] = [];
      for (const f of filters) {
        const want = await reportEvents(dat, f);
        expect(want, `trace-cmd refused ${f.join(' -F ')}`).not.toBeNull();
        const s = await ours(sim, f);
        expect(s.events, f.join(' -F ')).toBe(want);
        // every stack record kept is one of a kept event (the simulator writes one per event)
        expect(s.cookies + s.fullStacks, f.join(' -F ')).toBeLessThanOrEqual(s.events);
        seen.push(`${want}`);
      }
      // the filters select different sets, not all or nothing
      expect(new Set(seen).size).toBeGreaterThan(filters.length / 3);
    },
    20_000,
  );

  it('top --json --filter and sql --filter: the events and, per stack, the stack records trace-cmd report -F prints', async () => {
    const frames = dumpFrames(sim);
    const kallsyms = readFileSync(
      sim.find((x) => x.endsWith('/kallsyms'))!,
      'utf8',
    );
    expect(frames.size).toBeGreaterThan(50);
    const counts: number[] = [];
    for (const f of [
      ['kmem_cache_alloc: bytes_alloc > 256'],
      ['kmem_cache_alloc: COMM =~ "^binder" || CPU == 0'],
      ['kmem: !(bytes_req < 200) && common_pid != 88'],
      ['print', 'kmem_cache_alloc: gfp_flags & 0x20 && common_pid != 1577'],
    ]) {
      const what = f.join(' --filter ');
      const filters = f.flatMap((x) => ['--filter', x]);
      const want = await reportEvents(dat, f);
      expect(want, what).not.toBeNull();
      const sql = await cli(['sql', '--json', ...filters, "SELECT count(*)::INTEGER, count(*) FILTER (WHERE event = 'print')::INTEGER FROM events", ...sim]);
      expect(sql.code, sql.stderr).toBe(0);
      const [[events, prints]] = (JSON.parse(sql.stdout) as { rows: number[][] }).rows;
      expect(events, what).toBe(want);
      // trace-cmd's stack records of the kept events: every kmem_cache_alloc the simulator writes has one, the prints none
      const { stacks: wantRows, records } = await reportStacks(dat, f, frames, kallsyms);
      expect(records, what).toBe(want! - prints);
      const wantTotal = [...wantRows.values()].reduce((a, b) => a + b, 0);
      expect(wantTotal, what).toBeGreaterThan(records * 0.9);
      const top = await cli(['top', '--json', '--limit', '100000', ...filters, ...sim]);
      expect(top.code, top.stderr).toBe(0);
      const j = JSON.parse(top.stdout) as { total: number; totalWeight: number; rows: { count: number; frames: string[] }[] };
      expect([j.total, j.totalWeight], what).toEqual([wantTotal, wantTotal]);
      expect(new Map(j.rows.map((r) => [r.frames.join(';'), r.count])), what).toEqual(wantRows);
      counts.push(want!);
    }
    // each filter keeps some events, not all
    for (const n of counts) expect(n).toBeGreaterThan(50);
    for (const n of counts) expect(n).toBeLessThan(4000);
  }, 60_000);

  it.each(REFUSED)('refuses %s, as trace-cmd does', async (f) => {
    expect(await reportEvents(dat, [f])).toBeNull();
    expect(refused([f])).toBe(true);
  });

  realIt('counts what trace-cmd prints on trappy-trace.dat (bprint, thermal and cdev events)', async () => {
    const file = realTracePath('trappy-trace.dat');
    for (const f of [
      'thermal',
      'thermal/thermal_temperature: temp > 40000',
      'thermal_.*: id == 0 || temp_prev < 30000',
      'bprint: CPU == 3',
      'cdev_update: type =~ "cpu"',
      'cdev_update,thermal_temperature: !(CPU == 0)',
      'thermal_temperature: thermal_zone == "exynos-therm" && temp_prev != 53808',
      'bprint: ip =~ "0xc0"',
    ]) {
      const want = await reportEvents(file, [f]);
      expect(want, f).not.toBeNull();
      expect((await ours([file], [f])).events, f).toBe(want);
    }
  });

  it('summary --json --filter and export --parquet --filter hold the events trace-cmd prints', async () => {
    const f = 'kmem_cache_alloc: bytes_alloc > 256 && COMM !~ "^kworker"';
    const want = await reportEvents(dat, [f]);
    const s = await cli(['summary', '--json', '--filter', f, ...sim]);
    expect(s.code, s.stderr).toBe(0);
    const j = JSON.parse(s.stdout);
    expect(j.events).toBe(want);
    expect(Object.values(j.status as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(j.cookies + j.fullStacks);
    const out = join(dir, 'pq');
    const e = await cli(['export', '--parquet', out, '--filter', f, ...sim]);
    expect(e.code, e.stderr).toBe(0);
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    try {
      const rows = (
        await con.runAndReadAll(
          `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE event <> 'kmem_cache_alloc')::INTEGER AS other FROM '${join(out, 'events.parquet')}'`,
        )
      ).getRowsJS();
      expect(rows[0]).toEqual([want, 0]);
      const recs = (await con.runAndReadAll(`SELECT count(*)::INTEGER FROM '${join(out, 'records.parquet')}'`)).getRowsJS();
      expect(recs[0][0]).toBe(j.cookies + j.fullStacks);
    } finally {
      con.closeSync();
    }
  }, 20_000);
});

describe('--filter on text traces', () => {
  it('counts what a regex over the sample trace counts', async () => {
    const text = readFileSync(join(SAMPLES, 'trace'), 'utf8').split('\n');
    const files = ['trace', 'stack_map_bin.gen1', 'stack_map_bin.gen2', 'stack_map_bin.gen3', 'kallsyms'].map((f) => join(SAMPLES, f));
    const head = /^\s*(.+?)-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(\d+)\]\s+\S+\s+[\d.]+:\s+([^\s:]+):\s?(.*)$/;
    const lines = text.map((l) => head.exec(l)).filter((m): m is RegExpExecArray => m !== null && !m[5].startsWith('<stack_id') && m[4] !== 'kernel_stack');
    const count = (p: (m: RegExpExecArray) => boolean) => lines.filter(p).length;
    const field = (m: RegExpExecArray, k: string) => new RegExp(`(?:^| )${k}=(\\S+)`).exec(m[5])?.[1];
    const cases: [string[], (m: RegExpExecArray) => boolean][] = [
      [['kmem_cache_alloc'], (m) => m[4] === 'kmem_cache_alloc'],
      [['sched_.*'], (m) => m[4].startsWith('sched_')],
      [['kmem_cache_alloc: bytes_alloc > 256'], (m) => m[4] === 'kmem_cache_alloc' && Number(field(m, 'bytes_alloc')) > 256],
      [['kmem_cache_alloc: bytes_alloc & 64'], (m) => m[4] === 'kmem_cache_alloc' && (Number(field(m, 'bytes_alloc')) & 64) !== 0],
      [['kmem_cache_alloc: COMM =~ "^kworker" || CPU == 0'], (m) => m[4] === 'kmem_cache_alloc' && (/^kworker/i.test(m[1]) || m[3] === '000')],
      [['sched_wakeup: common_pid != 0 && !(CPU == 1)'], (m) => m[4] === 'sched_wakeup' && m[2] !== '0' && Number(m[3]) !== 1],
      [['sched_wakeup: nosuch == 1'], () => false],
      [
        ['kmem_cache_alloc: gfp_flags == "GFP_KERNEL"', 'sched_wakeup: CPU == 2'],
        (m) => (m[4] === 'kmem_cache_alloc' && field(m, 'gfp_flags') === 'GFP_KERNEL') || (m[4] === 'sched_wakeup' && m[3] === '002'),
      ],
    ];
    const got: number[] = [];
    for (const [f, p] of cases) {
      const want = count(p);
      const s = await ours(files, f);
      expect(s.events, f.join(' --filter ')).toBe(want);
      got.push(want);
    }
    expect(got[0]).toBeGreaterThan(100);
    expect(got[2]).toBeGreaterThan(0);
    expect(got[2]).toBeLessThan(got[0]);
  });

  it('a malformed filter: exit 2, its column named, nothing on stdout, no file read', async () => {
    for (const cmd of [['summary', '--json'], ['top'], ['export', '--format', 'folded'], ['sql', 'SELECT 1']]) {
      const r = await cli([...cmd, '--filter', 'kmem_cache_alloc: bytes_alloc = 3', '/nonexistent/file']);
      expect(r.code, cmd[0]).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain("filter: column 31: expected an operator after 'bytes_alloc'");
      expect(r.stderr).not.toContain('nonexistent');
    }
  }, 30_000);
});
