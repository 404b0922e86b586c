import { escapeControls as esc, jsonForTerminal } from '../core/base/control-chars.ts';
import { understood } from '../core/capture/ingest.ts';
import { DEFAULT_BUFFER_KB, DEFAULT_MAX_FALLBACK_SHARE, V8_POSTED_BITS, whatIf, type WhatIfResult, type WhatIfRow } from '../core/whatif/whatif.ts';
import { besideV7Doc, V7_DOC_FIGURES } from '../core/capture/v7-doc-figures.ts';
import { readFiles } from './read-files.ts';
import { ttyProgress } from './progress.ts';
import { parseOptions, parseOrExit, UsageError } from './usage.ts';

export const WHATIF_USAGE = `usage: stackmap-explorer whatif [--json] [--buffer-kb N] [--mode v7|v8] [--max-fallback-share X] [--boot-records N] [--] FILE...

  Would the stack map help this capture, and at which size? Replays the capture's full
  <stack trace> records in time order through the simulator's map (one map for every CPU)
  at bits 10..18 and reports per bits: stacks stored, fallbacks, gravestones, dedup rate (the
  share of stack records that reused a stored stack, as the v7 document's "Dedup rate"),
  the stack records' ring-buffer bytes with and without the map, the retention gain, and the
  map's memory (element pool + table); then the smallest bits whose fallbacks stay within
  the share.

  --json                   one JSON object on stdout (DESIGN 5.3)
  -q, --quiet              no progress line on stderr (shown only on a terminal)
  --buffer-kb N            ring buffer per CPU in KiB (1,024 B, as buffer_size_kb counts) for the
                           retention gain (default: the capture's own,
                           buffer_size_kb in capture.sh's capture.txt, else ${DEFAULT_BUFFER_KB})
  --mode v7|v8             replay one ABI (default both; the recommendation is v8's)
  --max-fallback-share X   the recommendation's limit on fallbacks / stack records, 0..1
                           (default ${DEFAULT_MAX_FALLBACK_SHARE})
  --boot-records N         take the first N stack records as recorded before the map was
                           published (trace_options=stackmap at boot): in full either way
  --                       ends the options

exit status: 0 when at least one file was read, 1 when none could be, 2 on a usage error`;

interface Parsed {
  json: boolean;
  bufferKb: number | null;
  modes: ('v7' | 'v8')[] | undefined;
  maxFallbackShare: number;
  bootRecords: number;
  quiet: boolean;
  files: string[];
}

function parse(args: string[]): Parsed | 'help' {
  const o = parseOptions(args, {
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    'buffer-kb': { type: 'string' },
    mode: { type: 'string' },
    'boot-records': { type: 'string' },
    'max-fallback-share': { type: 'string' },
  });
  if (o.help) return 'help';
  const p: Parsed = {
    json: o.flag('json'),
    bufferKb: null,
    modes: undefined,
    maxFallbackShare: DEFAULT_MAX_FALLBACK_SHARE,
    bootRecords: 0,
    quiet: o.flag('quiet'),
    files: o.positionals,
  };
  const kb = o.string('buffer-kb');
  if (kb !== undefined) {
    const n = Number(kb);
    if (kb.trim() === '' || !Number.isInteger(n) || n < 1 || n > 1 << 20) throw new UsageError(`--buffer-kb must be a whole number in [1, ${1 << 20}]: ${kb}`);
    p.bufferKb = n;
  }
  const mode = o.string('mode');
  if (mode !== undefined) {
    if (mode !== 'v7' && mode !== 'v8') throw new UsageError('--mode must be v7 or v8');
    p.modes = [mode];
  }
  const boot = o.string('boot-records');
  if (boot !== undefined) {
    const n = Number(boot);
    if (!/^\d{1,12}$/.test(boot) || !Number.isSafeInteger(n)) throw new UsageError(`--boot-records must be a whole number: ${boot}`);
    p.bootRecords = n;
  }
  const share = o.string('max-fallback-share');
  if (share !== undefined) {
    const n = Number(share);
    if (share.trim() === '' || !(n >= 0 && n <= 1)) throw new UsageError(`--max-fallback-share must be a number in [0, 1]: ${share}`);
    p.maxFallbackShare = n;
  }
  if (p.files.length === 0) throw new UsageError('no files given');
  return p;
}

/** kB as the page prints sizes (1,000 B; core/base/units.ts): the table's columns say kB */
const kb = (b: number) => (b / 1000).toFixed(1);
const V8_POSTED_CAPACITY = 2 ** V8_POSTED_BITS;

export function formatWhatIf(r: WhatIfResult): string {
  const lines = [
    `${r.records} full stack records (${r.distinctStacks} distinct; ${r.deepRecords} deeper than 64 frames, ${r.otherRecords} other stack records not replayed), ${r.events} events on ${r.cpus} CPUs`,
    ...r.notes.map((n) => `  ${esc(n)}`),
  ];
  if (r.records === 0) return lines.concat(['', `no recommendation: ${esc(r.recommended.why)}`]).join('\n') + '\n';
  const header = 'mode bits  stored fallbacks graves  dedup  withMap kB  without kB   gain  steady   map MiB';
  const row = (b: WhatIfRow) =>
    `${b.mode.padEnd(4)} ${String(b.bits).padStart(4)} ${String(b.stored).padStart(7)} ${String(b.fallbacks).padStart(9)} ${String(b.gravestones).padStart(6)} ` +
    `${(b.dedupRate * 100).toFixed(1).padStart(5)}% ${kb(b.bytesWithMap).padStart(11)} ${kb(b.bytesWithoutMap).padStart(11)} ${b.gain.toFixed(2).padStart(6)} ${b.steadyGain.toFixed(2).padStart(7)} ${(b.mapBytes / 2 ** 20).toFixed(1).padStart(9)}`;
  // v7 by bits; v8 as posted (one size), then v8 with the proposed bits parameter
  const groups: [string, WhatIfRow[]][] = [
    ['v7 (ftrace_stackmap.bits)', r.bits.filter((b) => b.mode === 'v7')],
    [`v8 as posted (fixed ${V8_POSTED_CAPACITY} stacks)`, r.bits.filter((b) => b.mode === 'v8' && b.v8Variant === 'posted')],
    ['+ proposed binary v2 and bits (v8 follow-up)', r.bits.filter((b) => b.mode === 'v8' && b.v8Variant === 'bin')],
  ];
  for (const [title, rows] of groups) if (rows.length) lines.push('', title, header, ...rows.map(row));
  lines.push('', ...v7DocLines(r));
  const rec = r.recommended;
  lines.push(
    '',
    `recommended: ${rec.bits === null ? 'none' : rec.v8Variant === 'posted' ? `v8 as posted (fixed ${V8_POSTED_CAPACITY} stacks)` : `bits ${rec.bits} (${rec.mode})`}`,
  );
  for (const m of r.recommendedByMode) lines.push(`  ${esc(m.why)}`);
  return lines.join('\n') + '\n';
}

/**
 * The row the recommendation is about (v8 as posted, its one size; else the recommended bits), or
 * the largest size of that mode when none fits: the row the v7 document's figures sit beside.
 */
export function docRow(r: WhatIfResult): WhatIfRow | undefined {
  const rec = r.recommended;
  const mine = r.bits.filter((b) => b.mode === rec.mode && (b.v8Variant ?? null) === (rec.v8Variant ?? null));
  return mine.find((b) => b.bits === rec.bits) ?? mine[mine.length - 1];
}

/** The v7 document's figures beside the replay's, each labelled as the document's. */
function v7DocLines(r: WhatIfResult): string[] {
  const b = docRow(r);
  if (!b) return [];
  const size = b.v8Variant === 'posted' ? `v8 as posted (fixed ${V8_POSTED_CAPACITY} stacks)` : `${b.mode} at bits ${b.bits}`;
  const rows = besideV7Doc({ records: b.records, dedupRate: b.dedupRate, bytesWithMap: b.bytesWithMap, bytesWithoutMap: b.bytesWithoutMap });
  const w = Math.max(...rows.map((x) => x.doc.length));
  return [
    `${V7_DOC_FIGURES.where}, beside this capture's replay, ${size}:`,
    `  ${''.padEnd(20)} ${"the v7 document's".padEnd(w)}  this capture`,
    ...rows.map((x) => `  ${x.what.padEnd(20)} ${x.doc.padEnd(w)}  ${x.model}`),
  ];
}

/** `whatif`: returns the exit status. */
export async function whatif(args: string[]): Promise<number> {
  const p = parseOrExit(parse, args, WHATIF_USAGE);
  if ('exit' in p) return p.exit;
  const progress = ttyProgress(p.quiet);
  const { capture, failed } = await readFiles(p.files, progress);
  progress.done();
  for (const f of failed) process.stderr.write(`${esc(f.file)}: cannot read: ${esc(f.reason)}\n`);
  if (!capture.files.some(understood)) {
    process.stderr.write('no file could be read\n');
    return 1;
  }
  const r = whatIf(capture, { bufferKb: p.bufferKb, modes: p.modes, maxFallbackShare: p.maxFallbackShare, bootRecords: p.bootRecords });
  process.stdout.write(p.json ? jsonForTerminal(r, 2) + '\n' : formatWhatIf(r));
  return 0;
}
