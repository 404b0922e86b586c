// Memory of reading a `stackmap_dump.py --json` dump (issue 18: a 110 MB one held 2 GB, a 255 MB
// one 4.3 GB): writes a dump of about --mb megabytes to a temporary file (indent 2 as json.dump
// writes it; --symbols adds a "symbols" list; past 262,144 entries the reader's cap applies), then
// reads it in a child process limited to --max-old-space-size = 4x the file, streamed from disk in
// 1 MB chunks, and prints the child's peak RSS and what it holds after a GC with the result alive.
//   npx tsx bench/dump-json-memory.ts [--mb 110] [--symbols] [--records N]
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};

if (process.argv[2] === '--child') {
  const file = process.argv[3];
  const { createDumpJsonParser } = await import('../src/core/formats/dump-json.ts');
  const { DiagnosticLog } = await import('../src/core/formats/diagnostics.ts');
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  const base = process.memoryUsage();
  let peak = base.rss;
  const fd = openSync(file, 'r');
  const log = new DiagnosticLog('dump.json');
  const p = createDumpJsonParser({ file: 'dump.json', diagnostics: log });
  const t = performance.now();
  const buf = new Uint8Array(1 << 20);
  for (let k = 0; ; k++) {
    const n = readSync(fd, buf);
    if (n === 0) break;
    p.push(buf.slice(0, n));
    if (k % 8 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const d = p.end();
  const secs = (performance.now() - t) / 1000;
  peak = Math.max(peak, process.memoryUsage().rss);
  // what the model reads: the columns, or the records of a dump with symbols
  const records = d.columns ? d.columns.count : d.records.length;
  gc();
  const held = process.memoryUsage();
  console.log(
    JSON.stringify({
      secs,
      records,
      columns: d.columns !== undefined,
      peakRss: peak - base.rss,
      heldHeap: held.heapUsed - base.heapUsed,
      heldExternal: held.external - base.external,
      diagnostics: log.list().map((x) => `${x.where}: ${x.message}`),
    }),
  );
  process.exit(0);
}

const mb = Number(arg('--mb', '110'));
const symbols = process.argv.includes('--symbols');
const dir = mkdtempSync(join(tmpdir(), 'dump-json-'));
const file = join(dir, 'dump.json');
const w = createWriteStream(file);
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0);
let size = 0;
let r = 0;
const want = mb * 1024 * 1024;
const records = Number(arg('--records', '0'));
let chunk = '[\n';
while (records > 0 ? r < records : size + chunk.length < want) {
  const depth = 8 + (rnd() % 20);
  const ips: string[] = [];
  const syms: string[] = [];
  for (let k = 0; k < depth; k++) {
    const f = rnd() % 5000;
    ips.push(`"0xffffffff8${(0x1000000 + f * 0x40).toString(16)}"`);
    syms.push(`"func_${f}+0x${(rnd() % 512).toString(16)}/0x${(512 + f).toString(16)}"`);
  }
  chunk += `${r > 0 ? ',\n' : ''}  {\n    "stack_id": ${r},\n    "ref_count": ${1 + (rnd() % 9)},\n    "ips": [\n      ${ips.join(',\n      ')}\n    ]`;
  if (symbols) chunk += `,\n    "symbols": [\n      ${syms.join(',\n      ')}\n    ]`;
  chunk += '\n  }';
  r++;
  if (chunk.length > 1 << 20) {
    size += chunk.length;
    if (!w.write(chunk)) await new Promise<void>((k) => w.once('drain', () => k()));
    chunk = '';
  }
}
w.end(chunk + '\n]\n');
await new Promise<void>((k) => w.once('finish', () => k()));
const bytes = statSync(file).size;
const limit = Math.ceil((4 * bytes) / 1048576);
try {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', `--max-old-space-size=${limit}`, '--import', 'tsx', fileURLToPath(import.meta.url), '--child', file],
    {
      encoding: 'utf8',
    },
  );
  const m = JSON.parse(out.trim().split('\n').pop()!);
  const MB = (x: number) => `${(x / 1048576).toFixed(0)} MB`;
  console.log(
    `${(bytes / 1048576).toFixed(0)} MB dump (${r.toLocaleString('en-US')} entries${symbols ? ', with symbols' : ''}), read under --max-old-space-size=${limit}: ` +
      `${m.secs.toFixed(1)} s, ${m.records.toLocaleString('en-US')} records${m.columns ? ' (columns)' : ''}, peak RSS +${MB(m.peakRss)} (${(m.peakRss / bytes).toFixed(2)}x the file), ` +
      `held after GC: heap ${MB(m.heldHeap)}, external ${MB(m.heldExternal)}`,
  );
  for (const d of m.diagnostics) console.log('  ' + d);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
