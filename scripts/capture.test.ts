import { RESET_MARKER } from '../src/core/formats/event-line.ts';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openAsBlob, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadFiles } from '../src/core/capture/load.ts';
import { Explorer } from '../src/core/query/explorer.ts';
import { buildTables } from '../src/core/tables/build.ts';
import { cellAt } from '../src/core/tables/schema.ts';
import { busyboxPath, FAKE_CPUS, INITIAL, makeFake, optionValues, type Fake } from './capture-fake-tracefs.ts';

// scripts/capture.sh against a fake tracefs (capture-fake-tracefs.ts), under busybox sh (with
// busybox's own tar, gzip, awk on PATH) and under dash. The expected files and generations come
// from what the fake served, the bundle is read with the host's GNU tar, and then opened with the
// app's own loadFiles.

const SCRIPT = new URL('./capture.sh', import.meta.url).pathname;

function requireShell(name: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`${name} is not installed: the capture script must be tested under it (apt-get install ${name})`);
  }
}
const DASH = requireShell('dash');
const BUSYBOX = requireShell('busybox');
const BUSYBOX_PATH = busyboxPath();

const SHELLS: { name: string; argv: string[]; path: string }[] = [
  { name: 'busybox sh', argv: [BUSYBOX, 'sh'], path: BUSYBOX_PATH },
  { name: 'dash', argv: [DASH], path: process.env.PATH ?? '/usr/bin:/bin' },
];

interface Run {
  code: number | null;
  stderr: string;
  out: string;
  /** the bundle's files as GNU tar extracts them */
  files: Map<string, Buffer>;
}

const fakes: Fake[] = [];
afterAll(() => fakes.forEach((f) => f.stop()));

function run(
  shell: (typeof SHELLS)[number],
  fake: Fake,
  args: string[],
  env: Record<string, string> = {},
  interrupt?: (child: ReturnType<typeof spawn>) => void,
): Promise<Run> {
  const out = join(mkdtempSync(join(tmpdir(), 'smx-out-')), 'cap.tar.gz');
  const child = spawn(shell.argv[0], [...shell.argv.slice(1), SCRIPT, '-o', out, ...args], {
    env: { PATH: shell.path, TRACEFS: fake.dir, KALLSYMS: join(fake.dir, '..', 'none'), ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => (stderr += d));
  interrupt?.(child);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const files = new Map<string, Buffer>();
      if (existsSync(out)) {
        const x = mkdtempSync(join(tmpdir(), 'smx-x-'));
        execFileSync('tar', ['-xzf', out, '-C', x]);
        for (const f of readdirSync(x)) files.set(f, readFileSync(join(x, f)));
      }
      resolve({ code, stderr, out, files });
    }),
  );
}

function kallsymsFile(fake: Fake, zeros: boolean): string {
  const p = join(mkdtempSync(join(tmpdir(), 'smx-ksym-')), 'kallsyms');
  const text = fake.capture.kernel.kallsyms();
  writeFileSync(p, zeros ? text.replace(/^[0-9a-f]+/gm, (a) => '0'.repeat(a.length)) : text);
  return p;
}

const load = async (bundle: string) => loadFiles([{ name: 'cap.tar.gz', blob: await openAsBlob(bundle) }]);
const generations = async (bundle: string) => (await load(bundle)).dumps.generations();

const gens = (f: Fake, n = f.capture.dumps.length) => f.capture.dumps.slice(0, n).map((d) => d.generation);
const numbered = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}.gen${i + 1}`);

describe.each(SHELLS)('capture.sh under $name', (shell) => {
  it('saves both dumps of every generation before each reset, restores every option, and the app sees every generation', async () => {
    const fake = makeFake({ resets: 2 });
    fakes.push(fake);
    const ksym = kallsymsFile(fake, false);
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-e', 'sched:sched_wakeup', '-b', '4096', '-r', '2', '-i', '1', '-d', '1'], { KALLSYMS: ksym });
    expect(r.stderr).not.toMatch(/warning/);
    expect(r.code, r.stderr).toBe(0);
    expect(optionValues(fake.dir)).toEqual(INITIAL);
    expect(fake.served()).toBe(3);
    // each reset came right after its trace_marker line, the form the explorer reads (RESET_MARKER)
    expect(fake.markersAtReset).toEqual([`${RESET_MARKER} 1`, `${RESET_MARKER} 2`]);
    const expected = ['capture.txt', 'kallsyms', 'stack_map_stat', 'trace', ...numbered('stack_map', 3), ...numbered('stack_map_bin', 3)];
    expect([...r.files.keys()].sort()).toEqual(expected.sort());
    for (let g = 0; g < 3; g++) {
      expect(r.files.get(`stack_map.gen${g + 1}`)!.toString()).toBe(fake.texts[g]);
      expect(new Uint8Array(r.files.get(`stack_map_bin.gen${g + 1}`)!)).toEqual(fake.bins[g]);
    }
    expect(r.files.get('trace')!.toString()).toBe(fake.trace); // cleared first: the stale line is gone
    expect(r.files.get('kallsyms')!.toString()).toBe(readFileSync(ksym, 'utf8'));
    const txt = r.files.get('capture.txt')!.toString();
    expect(txt).toContain(`# kernel release (uname -r): ${execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()}\n`);
    expect(txt).toContain(`# host (uname -n): ${execFileSync('uname', ['-n'], { encoding: 'utf8' }).trim()}\n`);
    expect(txt).toContain(`# machine (uname -m): ${execFileSync('uname', ['-m'], { encoding: 'utf8' }).trim()}\n`);
    for (const line of [
      'options/stackmap = 1 (was 0)',
      'options/stacktrace = 1 (was 0)',
      'buffer_size_kb = 4096 (was 1408)',
      'events/kmem/kmalloc/enable = 1 (was 0)',
    ])
      expect(txt).toContain(line);
    // the buffer in force as tracefs read it after -b, and the fake's per_cpu/cpuN folders
    expect(txt).toContain(`# buffer_size_kb: 4096 (per CPU`);
    expect(txt).toContain(`# cpus: ${FAKE_CPUS} (per_cpu/cpu* in tracefs)\n`);
    const cap = await load(r.out);
    expect(cap.dumps.generations()).toEqual(gens(fake));
    // and they are the generations the trace's cookies name, as the generator wrote them
    const named = new Set(fake.capture.lines.flatMap((l) => (l.type === 'cookie' ? [l.generation] : [])));
    expect(gens(fake)).toEqual([...named].sort((a, b) => a - b));
    // each binary dump pairs with its text dump (no disagreement), and capture.txt is read whole
    expect(cap.diagnostics.map((d) => `${d.file}: ${d.message}`)).toEqual([]);
    const info = cap.files.find((f) => f.file === 'cap.tar.gz/capture.txt')!;
    expect(info.kind).toBe('capture_txt');
    expect(info.lines!.unused).toBe(0);
    expect(info.lines!.used).toBe(txt.split('\n').length - 1);
    expect(info.capture).toMatchObject({
      tool: 'capture.sh',
      bufferKb: 4096,
      cpus: FAKE_CPUS,
      stackMap: 'yes',
      dumps: 3,
      resets: 2,
      interrupted: false,
      tracefs: fake.dir,
    });
    expect(info.capture!.set).toContainEqual({ file: 'buffer_size_kb', value: '4096', was: '1408' });
    // the captures table's row: the machine as uname names it here, where the script ran
    const [t] = buildTables(new Explorer(cap), { captureId: 'x', only: ['captures'] });
    const cell = (name: string) => cellAt(t.columns[t.spec.columns.findIndex((c) => c.name === name)], 0);
    const uname = (flag: string) => execFileSync('uname', [flag], { encoding: 'utf8' }).trim();
    expect([cell('host'), cell('machine'), cell('kernel_release')]).toEqual([uname('-n'), uname('-m'), uname('-r')]);
    expect([cell('cpus'), cell('buffer_kb'), cell('stack_map'), cell('interrupted')]).toEqual([FAKE_CPUS, 4096, 'yes', false]);
    expect(cell('captured_at')).toBe(txt.split('\n')[0].split(', ').pop());
  }, 30_000);

  it('on SIGINT mid-run it saves what it has and restores every option', async () => {
    const fake = makeFake({ resets: 4 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-p', 'function', '-r', '4', '-i', '1'], {}, (child) => {
      // interrupt once the first reset has happened (the fake served generation 2)
      const t = setInterval(() => {
        if (fake.served() >= 2) {
          clearInterval(t);
          child.kill('SIGINT');
        }
      }, 10);
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/interrupted/);
    expect(optionValues(fake.dir)).toEqual(INITIAL);
    const served = fake.served();
    expect(served).toBeLessThan(5);
    // one dump before each reset done, and the final one
    expect([...r.files.keys()].filter((f) => f.startsWith('stack_map.')).sort()).toEqual(numbered('stack_map', served).sort());
    expect(await generations(r.out)).toEqual(gens(fake, served));
  }, 30_000);

  it('until interrupted: SIGTERM ends it, restored', async () => {
    const fake = makeFake({ resets: 0 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc'], {}, (child) => setTimeout(() => child.kill('SIGTERM'), 1500));
    expect(r.code, r.stderr).toBe(0);
    expect(optionValues(fake.dir)).toEqual(INITIAL);
    expect(r.files.get('stack_map.gen1')!.toString()).toBe(fake.texts[0]);
  }, 30_000);

  it('without options/stackmap it says so and falls back to options/stacktrace', async () => {
    const fake = makeFake({ stackmap: false, resets: 0 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-r', '2', '-d', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/no stack map .*options\/stackmap is absent.*options\/stacktrace/);
    const { 'options/stackmap': _, ...rest } = INITIAL;
    expect(optionValues(fake.dir)).toEqual(rest);
    expect([...r.files.keys()].filter((f) => f.startsWith('stack_map'))).toEqual([]);
    expect(r.files.get('capture.txt')!.toString()).toContain('stack map: none');
    expect(r.files.get('trace')!.toString()).toBe(fake.trace);
  }, 30_000);

  it('without stack_map_bin it saves the text dumps alone', async () => {
    const fake = makeFake({ bin: false, resets: 1 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-r', '1', '-i', '1', '-d', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect([...r.files.keys()].filter((f) => f.startsWith('stack_map'))).toEqual(['stack_map.gen1', 'stack_map.gen2', 'stack_map_stat']);
    expect(await generations(r.out)).toEqual(gens(fake));
  }, 30_000);

  it('warns when kallsyms reads as all-zero addresses', async () => {
    const fake = makeFake({ resets: 0 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-d', '1'], { KALLSYMS: kallsymsFile(fake, true) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: .* all-zero addresses/);
    expect(r.files.get('capture.txt')!.toString()).toMatch(/warning: .* all-zero addresses/);
  }, 30_000);

  it('restores an unexpanded buffer_size_kb to the size it would expand to', async () => {
    const fake = makeFake({ resets: 0 });
    fakes.push(fake);
    writeFileSync(join(fake.dir, 'buffer_size_kb'), '7 (expanded: 1408)\n');
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-b', '512', '-d', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(fake.dir, 'buffer_size_kb'), 'utf8')).toBe('1408\n');
    expect(r.files.get('capture.txt')!.toString()).toContain('buffer_size_kb = 512 (was 1408)');
    expect(r.files.get('capture.txt')!.toString()).toContain('# buffer_size_kb: 512 (per CPU');
  }, 30_000);

  it('records the buffer size in force without -b: the expanded size of an unexpanded buffer', async () => {
    const fake = makeFake({ resets: 0 });
    fakes.push(fake);
    writeFileSync(join(fake.dir, 'buffer_size_kb'), '7 (expanded: 1408)\n');
    const r = await run(shell, fake, ['-e', 'kmem:kmalloc', '-d', '1']);
    expect(r.code, r.stderr).toBe(0);
    const txt = r.files.get('capture.txt')!.toString();
    expect(txt).toContain('# buffer_size_kb: 1408 (per CPU');
    expect(txt).not.toContain('# set buffer_size_kb');
    const cap = await load(r.out);
    expect(cap.files.find((f) => f.kind === 'capture_txt')?.capture?.bufferKb).toBe(1408);
  }, 30_000);

  it('refuses an unknown event with a clear message and leaves nothing changed', async () => {
    const fake = makeFake({ resets: 0 });
    fakes.push(fake);
    const r = await run(shell, fake, ['-e', 'kmem:nope', '-d', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no event kmem:nope/);
    expect(optionValues(fake.dir)).toEqual(INITIAL);
    expect(r.files.size).toBe(0);
  }, 30_000);
});
