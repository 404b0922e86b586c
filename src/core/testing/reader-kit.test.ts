// The kit's own checks: it catches a reader whose result depends on the chunk size, one that
// loses a line, one whose accounting does not add up, and a writer that does not give back what
// was read; and every format fixture passes it through the reader its kind names.
import { readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sniffKind } from '../formats/sniff.ts';
import { createStackMapStatParser } from '../formats/stack-map-stat.ts';
import type { ChunkParser, FileKind, LineCount } from '../formats/types.ts';
import { fixture } from './formats.ts';
import { linesOf, readEveryWay, readers, type ReaderSpec } from './reader-kit.ts';

const STAT = 'entries: 3\ntable_size: 1024\nsuccesses: 10\ndrops: 1\n';

/** A reader around the stat reader whose lines are changed by `edit` (given how many pushes it got). */
const broken = (edit: (lines: LineCount, pushes: number) => LineCount): ReaderSpec<{ lines: LineCount }> => ({
  kind: 'stack_map_stat',
  sniffed: false,
  create: (ctx) => {
    const inner = createStackMapStatParser(ctx);
    let pushes = 0;
    return {
      push: (c) => {
        pushes++;
        inner.push(c);
      },
      end: () => {
        const r = inner.end();
        return { ...r, lines: edit(r.lines!, pushes) };
      },
    } satisfies ChunkParser<{ lines: LineCount }>;
  },
});

describe('the reader kit catches', () => {
  it('a reader whose result depends on the chunk size', () => {
    const spec = broken((l, pushes) => (pushes > 3 ? { ...l, used: l.used - 1, unused: l.unused + 1 } : l));
    expect(() => readEveryWay('stack_map_stat', STAT, spec)).toThrow(/chunks of 1/);
  });

  it('a reader that loses a line (its total one short, used + unused still its total)', () => {
    const spec = broken((l) => ({ total: l.total - 1, used: l.used - 1, unused: l.unused }));
    expect(() => readEveryWay('stack_map_stat', STAT, spec)).toThrow(/lines read against the file's lines/);
  });

  it('a reader whose used + unused is not its total, or whose unused lines have no diagnostic', () => {
    expect(() =>
      readEveryWay(
        'stack_map_stat',
        STAT,
        broken((l) => ({ ...l, used: l.used - 1 })),
      ),
    ).toThrow(/used \+ unused/);
    expect(() =>
      readEveryWay(
        'stack_map_stat',
        STAT,
        broken((l) => ({ ...l, used: l.used - 1, unused: 1 })),
      ),
    ).toThrow(/no diagnostic/);
  });

  it('a file the sniffer names another kind, renamed `unknown`', () => {
    expect(() => readEveryWay('stack_map_stat', STAT, { ...readers.stackMapStat, kind: 'kallsyms' })).toThrow(/sniffer's kind/);
  });

  it('a writer whose output reads back otherwise, and passes a faithful one', () => {
    const stat = { ...readers.stackMapStat, sameAfterWrite: (r: { result: { entries: number | null } }) => r.result.entries };
    expect(() => readEveryWay('stack_map_stat', STAT, { ...stat, write: () => STAT.replace('3', '4') })).toThrow(/written and read again/);
    readEveryWay('stack_map_stat', STAT, { ...stat, write: () => STAT });
  });

  it("counts a file's lines as the readers do", () => {
    const enc = new TextEncoder();
    expect(['', 'a', 'a\n', 'a\nb', 'a\r\nb\r\n', '\n\n', 'a\n\0\0\0'].map((s) => linesOf(enc.encode(s)))).toEqual([0, 1, 1, 2, 2, 2, 1]);
    expect(linesOf(new Uint8Array([0xff, 0xfe, 0x61, 0, 0x0a, 0, 0x62, 0]))).toBe(2);
  });
});

const READER_OF: Partial<Record<FileKind, (name: string, bytes: Uint8Array) => unknown>> = {
  trace_text: (n, b) => readEveryWay(n, b, readers.traceText),
  systrace_html: (n, b) => readEveryWay(n, b, readers.systraceHtml),
  perf_script: (n, b) => readEveryWay(n, b, readers.perfScript),
  trace_cmd_dat: (n, b) => readEveryWay(n, b, readers.traceDat),
  stack_map_text: (n, b) => readEveryWay(n, b, readers.stackMapText),
  stack_map_bin: (n, b) => readEveryWay(n, b, readers.stackMapBin),
  stack_map_stat: (n, b) => readEveryWay(n, b, readers.stackMapStat),
  dump_json: (n, b) => readEveryWay(n, b, readers.dumpJson),
  kallsyms: (n, b) => readEveryWay(n, b, readers.kallsyms),
  capture_txt: (n, b) => readEveryWay(n, b, readers.captureInfo),
  sim_ledger: (n, b) => readEveryWay(n, b, readers.simLedger),
};

function files(dir: string, rel = ''): string[] {
  return readdirSync(dir + rel).flatMap((n) => (statSync(`${dir}${rel}/${n}`).isDirectory() ? files(dir, `${rel}/${n}`) : [`${rel}/${n}`.slice(1)]));
}

describe('every format fixture, read every way by its reader', () => {
  const dir = new URL('../formats/fixtures', import.meta.url).pathname;
  const all = files(dir).filter((f) => !f.startsWith('zstd/') && !f.startsWith('fuzz-regressions/') && !/README/.test(f));
  it.each(all)('%s', (name) => {
    const bytes = fixture(name);
    const read = READER_OF[sniffKind(bytes)];
    expect(read, `${name}: a reader for its kind`).toBeDefined();
    read!(name, bytes);
  });
});
