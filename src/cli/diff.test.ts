// `diff BEFORE AFTER` (issue 37, DESIGN 5.5) on captures written by `generate`: one kernel and
// stack population (one seed), other trace mixes, so stacks grow, shrink and leave. The second
// method is each capture's own `export --format folded`, joined here on the stack text with a
// Map; that export is itself checked against a regex reading of the trace's ids and the text
// dump's frames. flamegraph.pl (perl, ../shared/peer-tools/) draws `--format folded` as a
// differential; a copy of a capture moved to another KASLR offset, its ids and slots renumbered,
// diffs to zero.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { realIt } from '../core/testing/real-traces.ts';
import { diffCommand, DEFAULT_DIFF_LIMIT } from './diff.ts';
import { exportCommand } from './export.ts';
import { generate } from './generate.ts';
import { runCommand, spawnCli } from './test-io.ts';

afterEach(() => vi.restoreAllMocks());

const FLAMEGRAPH = new URL('../../../shared/peer-tools/flamegraph.pl', import.meta.url).pathname;
const hasPerl = (() => {
  try {
    execFileSync('perl', ['-e', '1'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const run = runCommand;

interface Row {
  frames: string[];
  before: number;
  after: number;
  delta: number;
  share: number;
}
interface DiffJson {
  before: { total: number; totalWeight: number };
  after: { total: number; totalWeight: number };
  normalized: boolean;
  rows: Row[];
}

const base = mkdtempSync(join(tmpdir(), 'smx-diff-'));
const BEFORE = join(base, 'before');
const AFTER = join(base, 'after');
const files = (dir: string) => ['trace', 'stack_map', 'stack_map_bin', 'stack_map_stat', 'kallsyms'].map((f) => join(dir, f));

/** `STACK COUNT` lines as a Map (the count after the last space) */
const foldedMap = (text: string) =>
  new Map(
    text
      .trimEnd()
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** The second method: both folded exports joined on the stack text, [before, after] per stack of either. */
function join2(b: Map<string, number>, a: Map<string, number>): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const [k, v] of b) out.set(k, [v, 0]);
  for (const [k, v] of a) out.set(k, [out.get(k)?.[0] ?? 0, v]);
  return out;
}

async function folded(args: string[]): Promise<Map<string, number>> {
  const r = await run(exportCommand, ['--format', 'folded', ...args]);
  expect(r.code).toBe(0);
  return foldedMap(r.out);
}

/** The folded lines read with regexes: the trace's `<stack_id N gen G>` counted per id, each id's frames from the text dump (`sym+0xoff`, root first). */
function regexFolded(dir: string): Map<string, number> {
  const perId = new Map<string, number>();
  for (const m of readFileSync(join(dir, 'trace'), 'utf8').matchAll(/: <stack_id (\d+) gen \d+>$/gm)) perId.set(m[1], (perId.get(m[1]) ?? 0) + 1);
  const frames = new Map<string, string[]>();
  for (const block of readFileSync(join(dir, 'stack_map'), 'utf8').split(/\n\n+/)) {
    const id = /^stack_id (\d+)/.exec(block)?.[1];
    if (id) frames.set(id, [...block.matchAll(/^ => (\S+?)\/0x[0-9a-f]+/gm)].map((m) => m[1]).reverse());
  }
  const out = new Map<string, number>();
  for (const [id, n] of perId) {
    const k = frames.get(id)!.join(';');
    out.set(k, (out.get(k) ?? 0) + n);
  }
  return out;
}

/**
 * The capture of another boot: every address in kallsyms and stack_map_bin moved by `offset` (a
 * KASLR slide), every id and slot renumbered (`id ^ xor`, in the trace and the dump, the dump's
 * records kept in ascending slot order). No text dump: its frames are symbols already.
 */
function otherBoot(src: string, dst: string, offset: bigint, xor: number): void {
  mkdirSync(dst, { recursive: true });
  const kallsyms = readFileSync(join(src, 'kallsyms'), 'utf8');
  writeFileSync(
    join(dst, 'kallsyms'),
    kallsyms.replace(/^[0-9a-f]{16}/gm, (a) => (BigInt('0x' + a) + offset).toString(16).padStart(16, '0')),
  );
  const bin = readFileSync(join(src, 'stack_map_bin'));
  const records: Buffer[] = [];
  let off = 16;
  for (let i = bin.readUInt32LE(8); i > 0; i--) {
    const nr = bin.readUInt32LE(off + 4);
    const r = Buffer.from(bin.subarray(off, off + 16 + 8 * nr));
    r.writeUInt32LE(r.readUInt32LE(0) ^ xor, 0);
    for (let k = 0; k < nr; k++) {
      const ip = r.readBigUInt64LE(16 + 8 * k);
      if (ip !== 0x7fffffffn) r.writeBigUInt64LE(ip + offset, 16 + 8 * k);
    }
    records.push(r);
    off += 16 + 8 * nr;
  }
  expect(off).toBe(bin.length);
  records.sort((x, y) => x.readUInt32LE(0) - y.readUInt32LE(0));
  writeFileSync(join(dst, 'stack_map_bin'), Buffer.concat([bin.subarray(0, 16), ...records]));
  const trace = readFileSync(join(src, 'trace'), 'utf8');
  writeFileSync(
    join(dst, 'trace'),
    trace.replace(/<stack_id (\d+) gen (\d+)>/g, (_, id: string, g: string) => `<stack_id ${Number(id) ^ xor} gen ${g}>`),
  );
  writeFileSync(join(dst, 'stack_map_stat'), readFileSync(join(src, 'stack_map_stat')));
}

beforeAll(async () => {
  // one seed: one kernel, and the first 50 stacks of BEFORE's 60 are AFTER's 50 (other ids and
  // slots: the map's seed is drawn after them); AFTER's trace is longer and flatter
  for (const [dir, args] of [
    [BEFORE, ['--events', '2000', '--stacks', '60', '--zipf', '1']],
    [AFTER, ['--events', '3000', '--stacks', '50', '--zipf', '0.3']],
  ] as const) {
    const r = await run(generate, ['--out', dir, '--seed', '1', '--symbols', '200', '--depth', '3-6', '--text-dump', ...args]);
    expect(r.code).toBe(0);
  }
}, 60_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('diff BEFORE AFTER', () => {
  it('--json: every stack of either capture, as the two folded exports joined, largest change first', async () => {
    const b = await folded([BEFORE]);
    const a = await folded([AFTER]);
    // the exports themselves, against the trace's ids and the dump's frames read with regexes
    expect(b).toEqual(regexFolded(BEFORE));
    expect(a).toEqual(regexFolded(AFTER));
    const want = join2(b, a);
    const r = await run(diffCommand, ['--json', BEFORE, AFTER]);
    expect([r.code, r.err]).toEqual([0, '']);
    const j = JSON.parse(r.out) as DiffJson;
    expect([j.before, j.after]).toEqual([
      { total: 2000, totalWeight: sum(b) },
      { total: 3000, totalWeight: sum(a) },
    ]);
    expect(new Map(j.rows.map((x) => [x.frames.join(';'), [x.before, x.after]]))).toEqual(want);
    expect(j.rows).toHaveLength(want.size);
    for (const x of j.rows) {
      expect(x.delta).toBe(x.after - x.before);
      expect(x.share).toBeCloseTo(x.after / sum(a) - x.before / sum(b), 12);
    }
    // stacks grew, shrank, and left (BEFORE's last 10 are not AFTER's)
    expect(j.rows.some((x) => x.delta > 0) && j.rows.some((x) => x.delta < 0)).toBe(true);
    expect(j.rows.filter((x) => x.after === 0).length).toBeGreaterThan(0);
    const size = j.rows.map((x) => Math.abs(x.delta));
    expect(size).toEqual([...size].sort((p, q) => q - p));
  });

  it("--format folded: difffolded.pl's STACK COUNT_BEFORE COUNT_AFTER per stack, sorted", async () => {
    const want = join2(await folded([BEFORE]), await folded([AFTER]));
    const r = await run(diffCommand, ['--format', 'folded', BEFORE, AFTER]);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toEqual([...want].map(([k, [x, y]]) => `${k} ${x} ${y}`).sort());
  });

  it("--normalize: BEFORE scaled to AFTER's total as difffolded.pl -n, int(count x total2 / total1)", async () => {
    const b = await folded([BEFORE]);
    const a = await folded([AFTER]);
    const [t1, t2] = [BigInt(sum(b)), BigInt(sum(a))];
    // exact integer arithmetic: the truncation difffolded.pl's int() makes of the quotient
    const want = [...join2(b, a)].map(([k, [x, y]]) => `${k} ${(BigInt(x) * t2) / t1} ${y}`).sort();
    const r = await run(diffCommand, ['--format', 'folded', '--normalize', BEFORE, AFTER]);
    expect(r.out.trimEnd().split('\n')).toEqual(want);
    // some counts are cut by the truncation (not rounded), and --json agrees
    expect([...b.values()].some((x) => (x * sum(a)) % sum(b) !== 0)).toBe(true);
    const j = JSON.parse((await run(diffCommand, ['--json', '-n', BEFORE, AFTER])).out) as DiffJson;
    expect(j.normalized).toBe(true);
    expect(j.rows.map((x) => `${x.frames.join(';')} ${x.before} ${x.after}`).sort()).toEqual(want);
  });

  realIt.skipIf(!hasPerl || !existsSync(FLAMEGRAPH))(
    'flamegraph.pl draws --format folded as a differential: red where a stack grew, blue where it shrank',
    async () => {
      const r = await run(diffCommand, ['--format', 'folded', BEFORE, AFTER]);
      const file = join(base, 'diff.folded');
      writeFileSync(file, r.out);
      const svg = execFileSync('perl', [FLAMEGRAPH, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      // color_scale: growth rgb(255,x,x), shrink rgb(x,x,255), x < 255; no hue of the default palette
      const fills = [...svg.matchAll(/fill="rgb\((\d+),(\d+),(\d+)\)"/g)].map((m) => m.slice(1, 4).map(Number));
      const red = fills.filter(([R, G, B]) => R === 255 && G === B && G < 255);
      const blue = fills.filter(([R, G, B]) => B === 255 && R === G && R < 255);
      expect(red.length).toBeGreaterThan(0);
      expect(blue.length).toBeGreaterThan(0);
      // the widths are AFTER's: the root counts its total
      const root = /<title>all \(([\d,]+) samples, 100%\)<\/title>/.exec(svg);
      expect(Number(root![1].replace(/,/g, ''))).toBe(3000);
    },
  );

  it('one capture from another boot (addresses slid, ids and slots renumbered) diffs to zero', async () => {
    const src = join(base, 'boot1');
    const r0 = await run(generate, ['--out', src, '--seed', '7', '--symbols', '200', '--depth', '3-6', '--events', '1500', '--stacks', '80']);
    expect(r0.code).toBe(0);
    const other = join(base, 'boot2');
    otherBoot(src, other, 0x2a00000n, 0x2ab);
    expect(readFileSync(join(other, 'trace'), 'utf8')).not.toBe(readFileSync(join(src, 'trace'), 'utf8'));
    const r = await run(diffCommand, ['--json', src, other]);
    expect([r.code, r.err]).toEqual([0, '']);
    const j = JSON.parse(r.out) as DiffJson;
    expect(j.rows.length).toBeGreaterThan(10);
    expect(j.rows.filter((x) => x.delta !== 0 || x.before === 0)).toEqual([]);
    expect(j.before).toEqual(j.after);
    // the control: the slid dump read with the first boot's kallsyms names other frames
    const mixed = join(base, 'mixed');
    mkdirSync(mixed);
    for (const f of ['trace', 'stack_map_bin', 'stack_map_stat']) writeFileSync(join(mixed, f), readFileSync(join(other, f)));
    writeFileSync(join(mixed, 'kallsyms'), readFileSync(join(src, 'kallsyms')));
    const m = JSON.parse((await run(diffCommand, ['--json', src, mixed])).out) as DiffJson;
    expect(m.rows.filter((x) => x.delta !== 0).length).toBe(m.rows.length);
  });

  it('the table: both totals, the largest changes first as --json orders them, new and gone marked, --limit rows', async () => {
    const j = JSON.parse((await run(diffCommand, ['--json', BEFORE, AFTER])).out) as DiffJson;
    const r = await run(diffCommand, ['--limit', '3', BEFORE, AFTER]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(`# before: 2,000 stack records, weighing 2,000; after: 3,000 stack records, weighing 3,000 (occurrences)`);
    const gone = j.rows.filter((x) => x.after === 0).length;
    expect(lines[1]).toMatch(
      new RegExp(`^# ${j.rows.length} stacks: \\d+ grew, \\d+ shrank, \\d+ unchanged; ${gone} only before, 0 only after; the 3 largest changes$`),
    );
    expect(lines[3]).toMatch(/^# +Before +After +Delta +Share +Side +Stack \(leaf first\)$/);
    // a row: before, after, delta, share change, side, then its frames leaf first, one a line
    const heads = lines.filter((l) => /^ +\d/.test(l));
    expect(heads).toHaveLength(3);
    heads.forEach((h, i) => {
      const x = j.rows[i];
      const mark = x.after === 0 ? ['gone'] : x.before === 0 ? ['new'] : [];
      expect(h.trim().split(/\s+/)).toEqual([
        String(x.before),
        String(x.after),
        (x.delta > 0 ? '+' : '') + x.delta,
        `${x.share > 0 ? '+' : ''}${(x.share * 100).toFixed(2)}%`,
        ...mark,
        x.frames.at(-1),
      ]);
    });
    const first = lines.indexOf(heads[0]);
    expect(lines.slice(first + 1, first + j.rows[0].frames.length).map((l) => l.trim())).toEqual([...j.rows[0].frames].reverse().slice(1));
    // a gone stack, with the default limit
    const all = await run(diffCommand, ['--limit', String(j.rows.length), BEFORE, AFTER]);
    expect(all.out.split('\n').filter((l) => / gone  /.test(l))).toHaveLength(gone);
    expect((await run(diffCommand, [BEFORE, AFTER])).out.split('\n').filter((l) => /^ +\d/.test(l))).toHaveLength(DEFAULT_DIFF_LIMIT);
  });

  it('--weight, --group, --filter and --granularity: applied to both sides, as the folded export applies them', async () => {
    for (const opts of [
      ['--weight', 'field:bytes_alloc', '--group', 'event'],
      ['--granularity', 'function', '--group', 'task', '--filter', 'sched_wakeup'],
      ['--weight', 'ref_count'],
      ['--filter', 'kmem_cache_alloc:bytes_alloc>=256', '--weight', 'field:bytes_req'],
    ]) {
      const want = join2(await folded([...opts, BEFORE]), await folded([...opts, AFTER]));
      const r = await run(diffCommand, ['--json', ...opts, BEFORE, AFTER]);
      expect(r.code, opts.join(' ')).toBe(0);
      const j = JSON.parse(r.out) as DiffJson;
      expect(new Map(j.rows.map((x) => [x.frames.join(';'), [x.before, x.after]])), opts.join(' ')).toEqual(want);
      expect(j.rows.length).toBeGreaterThan(0);
    }
    // sched_wakeup has no bytes_alloc: said per side
    const r = await run(diffCommand, ['--json', '--weight', 'field:bytes_alloc', BEFORE, AFTER]);
    expect(r.err).toMatch(/^before: [\d,]+ events have no bytes_alloc \(or not a number\): weighed 0\nafter: [\d,]+ events have no bytes_alloc/);
  });

  it('--before FILE... --after FILE...: loose files as the folders give them; bundles too', async () => {
    const byFolder = (await run(diffCommand, ['--json', BEFORE, AFTER])).out;
    const loose = await run(diffCommand, ['--json', '--before', ...files(BEFORE), '--after', ...files(AFTER)]);
    expect([loose.code, loose.out]).toEqual([0, byFolder]);
    // options among them, and -- before the files
    const mixed = await run(diffCommand, ['--after', ...files(AFTER), '--json', '--before', '--', ...files(BEFORE)]);
    expect(mixed.out).toBe(byFolder);
    const tgz = join(base, 'before.tar.gz');
    execFileSync('tar', ['czf', tgz, '-C', BEFORE, '.']);
    expect((await run(diffCommand, ['--json', tgz, AFTER])).out).toBe(byFolder);
  });

  it('usage errors exit 2; a capture none of whose files is read exits 1, naming it', async () => {
    for (const [args, msg] of [
      [[BEFORE], /diff compares two captures: BEFORE AFTER/],
      [[BEFORE, AFTER, AFTER], /not 3: several loose files make a capture with --before FILE\.\.\. --after FILE/],
      [['--before', ...files(BEFORE)], /AFTER has no files/],
      [[BEFORE, '--before', AFTER, '--after', AFTER], /a file before --before or --after belongs to neither capture/],
      [['--format', 'svg', BEFORE, AFTER], /--format takes table, folded or json, not svg/],
      [['--json', '--format', 'folded', BEFORE, AFTER], /--json and --format folded are two outputs/],
      [['--limit', '0', BEFORE, AFTER], /--limit takes a whole number of at least 1/],
      [['--weight', 'ref_count', '--group', 'task', BEFORE, AFTER], /cannot be split by --group/],
      [['--filter', 'kmem_cache_alloc:bytes_alloc >', BEFORE, AFTER], /column/],
      [['--bogus', BEFORE, AFTER], /unknown option: --bogus/],
    ] as const) {
      const r = await run(diffCommand, [...args]);
      expect([r.code, r.out], args.join(' ')).toEqual([2, '']);
      expect(r.err).toMatch(msg);
    }
    const empty = join(base, 'empty');
    mkdirSync(empty);
    const r = await run(diffCommand, [BEFORE, empty]);
    expect([r.code, r.out, r.err]).toEqual([1, '', `${empty}: cannot read: an empty folder (no files in it)\nafter: no file could be read (${empty})\n`]);
    expect((await run(diffCommand, ['--help'])).code).toBe(0);
  });

  it('through main: listed in --help, its own --help, its exit statuses', async () => {
    const help = await spawnCli('--help');
    expect(help.out).toMatch(/^ {2}diff {6}two captures compared stack by stack/m);
    const own = await spawnCli('diff', '--help');
    expect([own.code, own.out]).toEqual([0, expect.stringMatching(/^usage: stackmap-explorer diff /)]);
    const r = await spawnCli('diff', '--format', 'folded', BEFORE, AFTER);
    expect([r.code, r.out]).toEqual([0, (await run(diffCommand, ['--format', 'folded', BEFORE, AFTER])).out]);
    expect((await spawnCli('diff', BEFORE)).code).toBe(2);
  }, 60_000);
});
