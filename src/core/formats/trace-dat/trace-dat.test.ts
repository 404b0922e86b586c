import { beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../testing/test-helpers.ts';
import { realDescribe, realTrace, realTracePath } from '../../testing/real-traces.ts';
import { bump, countByNameAndCpu, readDat as read, reportLines, sorted, traceCmd, type ReportLine } from '../../testing/trace-dat.ts';
import { inOrder, readEveryWay, readers } from '../../testing/reader-kit.ts';
import { writeTraceDat } from './write.ts';

const REAL = realTracePath('trappy-trace.dat');
const SIZES = [0, 1, 7, 4096];

// The suite's body runs to collect its tests even without the folder: the file is read, and
// the second methods run, in beforeAll.
realDescribe('trappy-trace.dat, the real file', () => {
  let bytes: Uint8Array = new Uint8Array(0);

  // Second method 1: `trace-cmd report`, one line per event `comm-pid [cpu] ts: name: ...`
  // (reportLines), counted by CPU and by event name here.
  let lines: ReportLine[] = [];
  const report = new Map<string, number>();
  const reportCpu = new Map<string, number>();
  function reportCounts(): void {
    lines = reportLines(REAL);
    for (const l of lines) {
      bump(report, l.name);
      bump(reportCpu, String(l.cpu));
    }
  }

  // Second method 2: a plain page walker. Where each CPU's pages are comes from
  // `trace-cmd dump --flyrecord`, which ID is which event from `trace-cmd dump --events/--ftrace`;
  // the walk over the little-endian pages (4-byte longs: commit at 8, data at 12) is written here.
  function walk(): { perName: Map<string, number>; perCpu: Map<string, number> } {
    const names = new Map<number, string>();
    for (const section of ['--ftrace', '--events']) {
      let name = '';
      for (const line of traceCmd(['dump', '-i', REAL, section]).split('\n')) {
        if (line.startsWith('name: ')) name = line.slice(6).trim();
        else if (line.startsWith('ID: ')) names.set(+line.slice(4), name);
      }
    }
    const perName = new Map<string, number>();
    const perCpu = new Map<string, number>();
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const line of traceCmd(['dump', '-i', REAL, '--flyrecord']).split('\n')) {
      const m = /^\s*(\d+)\s+(\d+)\s+\[offset, size of cpu (\d+)\]/.exec(line);
      if (!m) continue;
      for (let page = +m[1]; page < +m[1] + +m[2]; page += 4096) {
        const size = v.getUint32(page + 8, true) & 0x7ffffff;
        let o = page + 12;
        while (o < page + 12 + size) {
          const w = v.getUint32(o, true);
          const type = w & 31;
          if (type === 29) {
            if (w >>> 5 === 0) break;
            o += 4 + v.getUint32(o + 4, true);
          } else if (type === 30 || type === 31) o += 8;
          else {
            const len = type === 0 ? v.getUint32(o + 4, true) - 4 : type * 4;
            const rec = o + (type === 0 ? 8 : 4);
            bump(perName, names.get(v.getUint16(rec, true)) ?? '?');
            bump(perCpu, String(+m[3]));
            o = rec + ((len + 3) & ~3);
          }
        }
      }
    }
    return { perName, perCpu };
  }
  let walked: ReturnType<typeof walk>;
  beforeAll(() => {
    bytes = realTrace('trappy-trace.dat');
    reportCounts();
    walked = walk();
  });

  it('both second methods agree with each other (and found events)', () => {
    expect(sorted(walked.perName)).toEqual(sorted(report));
    expect(sorted(walked.perCpu)).toEqual(sorted(reportCpu));
    expect(report.size).toBeGreaterThan(1);
  });

  it('events per CPU and per name, exactly (every way: reader-kit.ts at chunks of 0, 1, 7 and 4096 bytes, renamed `unknown`, every byte counted)', () => {
    // what must agree between readings: the result, the sink's calls in order, the diagnostics
    const k = readEveryWay('trappy-trace.dat', bytes, { ...readers.traceDat, sizes: SIZES, project: inOrder });
    const { result: r, got } = k;
    expect(countByNameAndCpu(got.events)).toEqual({ names: sorted(report), cpus: sorted(reportCpu) });
    expect(r).toMatchObject({ version: 6, littleEndian: true, cpus: 8, total: bytes.length, used: bytes.length, unused: 0 });
    // the one diagnostic: its kallsyms was saved without privilege
    expect(k.diagnostics.map((d) => d.message)).toEqual([expect.stringContaining('without privilege')]);
  });

  it('the first event as trace-cmd report prints it', () => {
    const first = lines[0];
    const { got } = read(bytes, 0);
    // report merges the CPUs by time: its first event is the earliest of ours
    const e = got.events.reduce((a, b) => (b.ts < a.ts ? b : a));
    expect([e.comm, e.pid, e.cpu, e.ts.toFixed(6), e.name]).toEqual([first.comm, first.pid, first.cpu, first.ts, first.name]);
  });

  it('renamed `unknown`, through the ingest: sniffed by content, the same count', () => {
    const cap = ingestFiles([['unknown', bytes]], 7919);
    expect(cap.files[0]).toMatchObject({ kind: 'trace_cmd_dat', bytes: { total: bytes.length, used: bytes.length, unused: 0 } });
    expect(cap.trace.eventCount).toBe([...report.values()].reduce((a, b) => a + b, 0));
  });
});

// ---------------------------------------------------------------- written files read back
// (every version, byte order and compression: trace-dat-write.test.ts)

describe('trace.dat written by trace-dat-write.ts', () => {
  it("kernel_stack ips symbolize through the file's own kallsyms", () => {
    const kallsyms = 'ffffffff81000000 T _stext\nffffffff81000100 t do_work\nffffffff81000200 T schedule\n';
    const ips = [0xffffffff81000104n, 0xffffffff81000210n, 0xffffffff81000000n];
    const bytes = writeTraceDat({
      littleEndian: false,
      longSize: 8,
      cpus: 1,
      comms: [[5, 'five']],
      kallsyms,
      events: [{ kind: 'stack', cpu: 0, ts: 1000, pid: 5, ips }],
    });
    const { got } = read(bytes, 7);
    // plain lookup: the last symbol at or below each ip
    const syms = kallsyms
      .trim()
      .split('\n')
      .map((l) => [BigInt('0x' + l.split(' ')[0]), l.split(' ')[2]] as const);
    const want = ips.map((ip) => {
      const [at, name] = syms.filter(([a]) => a <= ip).at(-1)!;
      return `${name}+0x${(ip - at).toString(16)}`; // the project's key: the offset even when 0
    });
    expect(got.stacks.map((s) => [s.kind, s.comm, s.frames])).toEqual([['full', 'five', want]]);
    expect(want).toEqual(['do_work+0x4', 'schedule+0x10', '_stext+0x0']);
  });

  it('an unknown version and a bad version: a clear diagnostic', () => {
    const v6 = writeTraceDat({ littleEndian: true, longSize: 8, cpus: 1, comms: [], events: [] });
    const v8 = v6.slice();
    v8[10] = 0x38;
    expect(
      read(v8, 0)
        .log.list()
        .map((d) => d.message),
    ).toContainEqual(expect.stringContaining('version 8: only versions 6 and 7'));
    const vx = v6.slice();
    vx[10] = 0x78;
    expect(
      read(vx, 0)
        .log.list()
        .map((d) => d.message),
    ).toContainEqual(expect.stringContaining('not a number'));
  });
});
