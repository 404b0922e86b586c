import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCaptureInfoParser, describeCapture, MAX_INFO_LINE, type CaptureFacts } from './capture-info.ts';
import { DiagnosticLog } from './diagnostics.ts';
import { feedChunks } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';

const enc = new TextEncoder();

function parse(text: string, chunk = 0) {
  const diagnostics = new DiagnosticLog('capture.txt');
  const r = feedChunks(createCaptureInfoParser({ file: 'capture.txt', diagnostics }), enc.encode(text), chunk);
  expect(r.lines.used + r.lines.unused).toBe(r.lines.total);
  return { ...r, diags: diagnostics.list() };
}

/** Read every way (reader-kit.ts: chunk sizes, renamed `unknown`, the file's lines, and written back by `write` below, capture.sh's printf lines). */
function parseAll(text: string) {
  const { result, diagnostics } = readEveryWay('capture.txt', text, {
    ...readers.captureInfo,
    write: (r) => r.result.facts && write(r.result.facts),
    sameAfterWrite: (r) => r.result.facts,
  });
  return { ...result, diags: diagnostics };
}

/** capture.txt as scripts/capture.sh prints it (the reference writer: the script's printf lines, in TypeScript). */
function write(f: CaptureFacts): string {
  const out = [`# stackmap explorer capture, by ${f.tool}, ${f.date}`, `# tracefs: ${f.tracefs}`, `# kernel release (uname -r): ${f.kernelRelease ?? ''}`];
  if (f.host !== null) out.push(`# host (uname -n): ${f.host}`);
  if (f.machine !== null) out.push(`# machine (uname -m): ${f.machine}`);
  out.push(`# buffer_size_kb: ${f.bufferKb ?? 'unknown'} (per CPU, read from tracefs before the restore)`);
  out.push(f.cpus === null ? '# cpus: unknown (no per_cpu/cpu* in tracefs)' : `# cpus: ${f.cpus} (per_cpu/cpu* in tracefs)`);
  out.push(
    f.stackMap === 'yes'
      ? `# stack map: yes, ${f.dumps} dumps, ${f.resets} resets`
      : '# stack map: none (options/stackmap absent), full stacks via options/stacktrace',
  );
  if (f.interrupted) out.push('# interrupted');
  for (const w of f.warnings) out.push(`# warning: ${w}`);
  for (const s of f.set) out.push(`# set ${s.file} = ${s.value} (was ${s.was})`);
  return out.join('\n') + '\n';
}

const SCRIPT_OUTPUT = `# stackmap explorer capture, by capture.sh, 2026-12-01T10:00:00Z
# tracefs: /sys/kernel/tracing
# kernel release (uname -r): 6.1.0-13-amd64
# host (uname -n): pixel-7
# machine (uname -m): aarch64
# buffer_size_kb: 4096 (per CPU, read from tracefs before the restore)
# cpus: 8 (per_cpu/cpu* in tracefs)
# stack map: yes, 3 dumps, 2 resets
# interrupted
# warning: /proc/kallsyms reads as all-zero addresses: read it as root
# set tracing_on = 0 (was 1)
# set buffer_size_kb = 4096 (was 1408)
# set options/stackmap = 1 (was 0)
`;

describe('capture.txt', () => {
  it('reads what capture.sh writes, every line used', () => {
    const r = parseAll(SCRIPT_OUTPUT);
    expect(r.diags).toEqual([]);
    expect(r.lines).toEqual({ total: 13, used: 13, unused: 0 });
    expect(r.facts).toEqual({
      tool: 'capture.sh',
      date: '2026-12-01T10:00:00Z',
      tracefs: '/sys/kernel/tracing',
      kernelRelease: '6.1.0-13-amd64',
      host: 'pixel-7',
      machine: 'aarch64',
      bufferKb: 4096,
      cpus: 8,
      stackMap: 'yes',
      dumps: 3,
      resets: 2,
      interrupted: true,
      warnings: ['/proc/kallsyms reads as all-zero addresses: read it as root'],
      set: [
        { file: 'tracing_on', value: '0', was: '1' },
        { file: 'buffer_size_kb', value: '4096', was: '1408' },
        { file: 'options/stackmap', value: '1', was: '0' },
      ],
    } satisfies CaptureFacts);
    expect(describeCapture(r.facts!)).toContain(
      'kernel 6.1.0-13-amd64; buffer 4096 KiB per CPU (buffer_size_kb); 8 CPUs; stack map on, 3 dumps, 2 resets; interrupted',
    );
  });

  it('an older capture.txt without the buffer lines, and a kernel without the map', () => {
    const r = parseAll(
      '# stackmap explorer capture, by capture.sh, 2026-11-30T09:00:00Z\n# tracefs: /t\n# kernel release (uname -r): 5.10\n# stack map: none (options/stackmap absent), full stacks via options/stacktrace\n',
    );
    expect(r.diags).toEqual([]);
    expect(r.facts).toMatchObject({ host: null, machine: null, bufferKb: null, cpus: null, stackMap: 'none', dumps: null, interrupted: false });
    expect(describeCapture(r.facts!)).toContain('buffer size not recorded');
  });

  it('keeps every line it does not know as unused, with its line number, never silently', () => {
    const text = SCRIPT_OUTPUT + 'free text\n# favourite colour: blue\n# set nonsense\n# buffer_size_kb: lots\n' + 'x'.repeat(MAX_INFO_LINE + 1) + '\n';
    const r = parseAll(text);
    expect(r.lines).toEqual({ total: 18, used: 14, unused: 4 });
    expect(r.facts!.bufferKb).toBeNull(); // the second, unreadable value is the last one
    expect(r.diags.map((d) => `${d.where} ${d.message}`)).toEqual([
      'line 14 not a line capture.sh writes (each starts with "# ")',
      'line 15 not a line capture.sh writes',
      'line 16 a "# set" line that is not "FILE = VALUE (was OLD)"',
      'line 17 "buffer_size_kb" appears twice: the last value is used',
      'line 17 value of "buffer_size_kb" is not a number: lots',
      'line 18 line longer than 4,096 characters: not read (capture.sh writes short lines)',
    ]);
  });

  it('a file that is not capture.sh header is read as nothing, with a reason', () => {
    const r = parse('# tracefs: /t\n# cpus: 2\n');
    expect(r.facts).toBeNull();
    expect(r.lines).toEqual({ total: 2, used: 0, unused: 2 });
    expect(r.diags.map((d) => d.message)).toContain('not a capture.txt that capture.sh wrote');
  });

  it('property: any capture the script can describe reads back as written, and foreign lines are each unused', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9_./-]{1,20}$/);
    const text = fc
      .stringMatching(/^[ -~]{0,60}$/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const facts: fc.Arbitrary<CaptureFacts> = fc.record({
      tool: fc.constant('capture.sh'),
      date: fc.constant('2026-12-01T10:00:00Z'),
      tracefs: word,
      kernelRelease: word,
      host: fc.option(word, { nil: null }),
      machine: fc.option(word, { nil: null }),
      bufferKb: fc.option(fc.integer({ min: 1, max: 1 << 20 }), { nil: null }),
      cpus: fc.option(fc.integer({ min: 1, max: 4096 }), { nil: null }),
      stackMap: fc.constantFrom('yes' as const, 'none' as const),
      dumps: fc.integer({ min: 0, max: 99 }),
      resets: fc.integer({ min: 0, max: 99 }),
      interrupted: fc.boolean(),
      warnings: fc.array(text, { maxLength: 3 }),
      set: fc.array(fc.record({ file: word, value: text.filter((s) => !s.includes(' = ')), was: text }), { maxLength: 5 }),
    });
    // lines the script never writes: none starts with "# "
    const foreign = fc.array(fc.stringMatching(/^[A-Za-z][ -~]{0,30}$/), { maxLength: 4 });
    fc.assert(
      fc.property(facts, foreign, fc.nat(), (f, junk, at) => {
        const lines = write(f).trimEnd().split('\n');
        const where = 1 + (at % lines.length);
        lines.splice(where, 0, ...junk);
        const r = parse(lines.join('\n') + '\n', 1 + (at % 13));
        const want = f.stackMap === 'yes' ? f : { ...f, dumps: null, resets: null };
        expect(r.facts).toEqual(want);
        expect(r.lines).toEqual({ total: lines.length, used: lines.length - junk.length, unused: junk.length });
        expect(r.diags.reduce((n, d) => n + d.count, 0)).toBe(junk.length);
      }),
      { numRuns: 300, seed: 1201 },
    );
  });

  it('long runs of blanks and brackets finish and are reported, as any reader must', () => {
    for (const filler of [' ', '(', '= ', ' (was '])
      for (const n of [500, 200_000]) {
        const line = '# set a' + filler.repeat(n);
        const r = parse(`# stackmap explorer capture, by capture.sh, d\n${line}\n${line})\n`);
        expect(r.lines.unused).toBe(2);
      }
  });
});
