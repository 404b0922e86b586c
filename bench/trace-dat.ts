// trace.dat reading: a file of --events events (samples, kernel stacks and bprint events over 4
// CPUs) written by this tree's writers as version 6 and as version 7 (none, zlib, zstd), read by
// createTraceDatParser in 64 KB chunks. Prints the best of --rounds per file, the v7 ones as a
// ratio to the v6 read in the same process (the cost of sections and decompression), alternating.
//
//   npx tsx bench/trace-dat.ts [--events N] [--rounds N] [--dir CORE_DIR] [--json] [--smoke]
//   npx tsx bench/trace-dat.ts --against REV [--runs N] [--no-print]
//
// --json: the last line of stdout is {"rows": [...]} (bench/README.md). --smoke: 3,000 events,
// every file's event count checked against the number written; no timing target. --dir reads
// with another copy of src/core (the input is always this tree's writer's). --against REV copies
// src/core as of REV (bench/args.ts) and runs the v6 read as child processes, A (REV) and B (the
// working tree) alternating, --runs times each, and prints B/A (REV may not read version 7).
// --no-print: samples and stacks only (a reader without printk expansion does less for bprint).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { arg, coreAt, flag } from './args.ts';
import { writeTraceDat, type DatWriteEvent, type DatWriteOptions } from '../src/core/formats/trace-dat/write.ts';
import { writeTraceDatV7 } from '../src/core/formats/trace-dat/write-v7.ts';

const repo = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const SMOKE = flag('--smoke');
const JSON_OUT = flag('--json');
const EVENTS = Number(arg('--events', SMOKE ? '3000' : '300000'));
const ROUNDS = Number(arg('--rounds', SMOKE ? '1' : '5'));
const ONLY_V6 = flag('--only-v6');
/** samples and stacks only (bprint events are expanded only by readers that know printk formats) */
const NO_PRINT = flag('--no-print');

function input(n: number): DatWriteOptions {
  const events: DatWriteEvent[] = [];
  let s = 12345;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; i < n; i++) {
    const cpu = i % 4;
    const ts = 1_000_000 + i * 1000 + Math.floor(rnd() * 900);
    const k = i % 10;
    if (k < 6 || (NO_PRINT && k >= 8)) events.push({ kind: 'sample', cpu, ts, pid: 7, value: i, label: 'l' + (i % 100) });
    else if (k < 8)
      events.push({
        kind: 'stack',
        cpu,
        ts,
        pid: 42,
        ips: Array.from({ length: 4 + (i % 12) }, (_, d) => 0xffffffff81000000n + BigInt(((i * 7 + d * 131) % 5000) * 16)),
      });
    else
      events.push({
        kind: 'print',
        cpu,
        ts,
        pid: 7,
        ip: 0xffffffff81000010n,
        fmt: 0xffffffff82000000n,
        args: [{ size: 4, value: BigInt(i) }, { str: 'cpu' }, { size: 8, value: BigInt(i) * 3n }],
      });
  }
  return {
    littleEndian: true,
    longSize: 8,
    cpus: 4,
    comms: [
      [7, 'seven'],
      [42, 'answer'],
    ],
    printk: [[0xffffffff82000000n, 'n=%d %s v=%llx\n']],
    kallsyms: 'ffffffff81000000 T _stext\n',
    events,
  };
}

async function measure(dir: string): Promise<{ name: string; ms: number; events: number }[]> {
  const { createTraceDatParser } = (await import(
    pathToFileURL(join(dir, 'formats/trace-dat/trace-dat.ts')).href
  )) as typeof import('../src/core/formats/trace-dat/trace-dat.ts');
  const { DiagnosticLog } = (await import(pathToFileURL(join(dir, 'formats/diagnostics.ts')).href)) as typeof import('../src/core/formats/diagnostics.ts');
  const o = input(EVENTS);
  const files: [string, Uint8Array][] = [['v6', writeTraceDat(o)]];
  if (!ONLY_V6) for (const c of ['none', 'zlib', 'zstd'] as const) files.push([`v7-${c}`, writeTraceDatV7({ ...o, compression: c })]);
  const sink = { event() {}, stackRecord() {}, lost() {} };
  const once = (b: Uint8Array) => {
    const p = createTraceDatParser({ file: 'x', diagnostics: new DiagnosticLog('x') }, sink);
    const t = performance.now();
    for (let i = 0; i < b.length; i += 1 << 16) p.push(b.subarray(i, i + (1 << 16)));
    const r = p.end();
    return { ms: performance.now() - t, events: r.events };
  };
  const best = files.map(([name]) => ({ name, ms: Infinity, events: 0 }));
  for (let r = 0; r < ROUNDS; r++) {
    files.forEach(([, b], i) => {
      const x = once(b);
      best[i].ms = Math.min(best[i].ms, x.ms);
      best[i].events = x.events;
    });
  }
  return best;
}

if (arg('--against', '')) {
  const rev = arg('--against', '');
  const runs = Number(arg('--runs', '4'));
  const tmp = coreAt(repo, rev, 'bench-dat-');
  try {
    const child = (dir: string) => {
      const extra = NO_PRINT ? ['--no-print'] : [];
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--dir',
          dir,
          '--only-v6',
          '--json',
          '--events',
          String(EVENTS),
          '--rounds',
          String(ROUNDS),
          ...extra,
        ],
        { encoding: 'utf8', cwd: repo },
      );
      if (r.status !== 0) throw new Error(r.stderr);
      return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { rows: { value: number }[] }).rows[0].value;
    };
    let a = Infinity;
    let b = Infinity;
    for (let i = 0; i < runs; i++) {
      a = Math.min(a, child(join(tmp, 'src/core')));
      b = Math.min(b, child(join(repo, 'src/core')));
    }
    console.log(
      `v6 read of ${EVENTS} events, best of ${runs} runs x ${ROUNDS} rounds: A (${rev}) ${a.toFixed(1)} ms, B (tree) ${b.toFixed(1)} ms, B/A ${(b / a).toFixed(2)}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else {
  const best = await measure(arg('--dir', join(repo, 'src/core')));
  const bad = best.filter((x) => x.events !== EVENTS);
  for (const x of best) if (!JSON_OUT) console.log(`${x.name}: ${x.ms.toFixed(1)} ms for ${x.events} events`);
  if (bad.length) {
    console.error(`events read differ from the ${EVENTS} written: ${bad.map((x) => `${x.name} ${x.events}`).join(', ')}`);
    process.exit(1);
  }
  const v6 = best[0];
  const rows = best.map((x) =>
    x.name === 'v6'
      ? { id: 'trace-dat-v6-read', what: `trace.dat v6 read, ${EVENTS} events`, value: +x.ms.toFixed(2), unit: 'ms' }
      : {
          id: `trace-dat-${x.name}-read`,
          what: `trace.dat ${x.name} read, ${EVENTS} events`,
          value: +x.ms.toFixed(2),
          unit: 'ms',
          baseline: { what: 'the v6 read of the same events', value: +v6.ms.toFixed(2), unit: 'ms' },
          ratio: +(x.ms / v6.ms).toFixed(3),
        },
  );
  if (JSON_OUT) console.log(JSON.stringify({ rows }));
}
