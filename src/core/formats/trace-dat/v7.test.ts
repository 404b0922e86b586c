import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../testing/test-helpers.ts';
import { inOrder, readEveryWay, readers } from '../../testing/reader-kit.ts';
import { realDescribe, realTrace, realTracePath } from '../../testing/real-traces.ts';
import { countByNameAndCpu, hasTraceCmd, readDat, reportLines, traceCmd, type ReportLine } from '../../testing/trace-dat.ts';

const REAL = realTracePath('trappy-trace.dat');

// trace-cmd writes version 7 from the real version 6 file; the converted files are read here and
// checked against (1) `trace-cmd report` on the same converted file, (2) what our reader reads
// from the original version 6 file, and (3) the figures `trace-cmd report` gives for the v6 file
// (525 events: bprint 501, cdev_update 18, thermal_temperature 6; per CPU 275,36,28,31,2,59,91,3),
// which trace-dat.test.ts also derives with its own page walker.
// The suite's bodies run to collect its tests even when it is skipped: the files are read and
// converted in hooks, which run only when it is not.
realDescribe.skipIf(!hasTraceCmd)('trappy-trace.dat converted to version 7 by trace-cmd', () => {
  let dir = '';
  let base: ReturnType<typeof readDat>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dat-v7-'));
    base = readDat(realTrace('trappy-trace.dat'), 0);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const compressions = hasTraceCmd ? traceCmd(['list', '-c']) : '';

  for (const compression of ['zstd', 'none']) {
    const usable = compression === 'none' || compressions.includes(compression);
    describe.skipIf(!usable)(`--compression ${compression}`, () => {
      let file = '';
      let bytes = new Uint8Array(0);
      let report: ReportLine[] = [];
      beforeAll(() => {
        file = join(dir, `trappy-v7-${compression}.dat`);
        traceCmd(['convert', '-i', REAL, '-o', file, '--file-version', '7', '--compression', compression]);
        bytes = new Uint8Array(readFileSync(file));
        report = reportLines(file);
      });

      it('is a version 7 file with the compression asked for (trace-cmd dump says so)', () => {
        const summary = traceCmd(['dump', '-i', file, '--summary']);
        expect(summary).toMatch(/\b7\s+\[Version\]/);
        expect(summary).toMatch(new RegExp(`${compression}\\s+\\[Compression algorithm\\]`));
      });

      it('the v6 counts exactly, every byte used (every way: reader-kit.ts, every chunk size, renamed `unknown`)', () => {
        const k = readEveryWay(`trappy-v7-${compression}.dat`, bytes, { ...readers.traceDat, project: inOrder });
        const { result: r, got } = k;
        const counted = countByNameAndCpu(got.events);
        expect(counted).toEqual(countByNameAndCpu(report));
        expect(counted.names).toEqual([
          ['bprint', 501],
          ['cdev_update', 18],
          ['thermal_temperature', 6],
        ]);
        expect(r.perCpu).toEqual([275, 36, 28, 31, 2, 59, 91, 3]);
        expect(r).toMatchObject({ version: 7, compression, littleEndian: true, cpus: 8, events: 525, total: bytes.length, used: bytes.length, unused: 0 });
        expect(k.diagnostics.map((d) => d.message)).toEqual([expect.stringContaining('without privilege')]);
      });

      it('the same event columns as the version 6 read', () => {
        const { got } = readDat(bytes, 7);
        expect(got.order).toEqual(base.got.order);
        expect(got.events.map((e) => [e.comm, e.pid, e.tgid, e.cpu, e.ts, e.flags, e.name, e.payload])).toEqual(
          base.got.events.map((e) => [e.comm, e.pid, e.tgid, e.cpu, e.ts, e.flags, e.name, e.payload]),
        );
      });

      it('each event as trace-cmd report prints it: task, pid, CPU, time, name, and the bprint text', () => {
        const { got } = readDat(bytes, 0);
        const key = (comm: string, pid: number, cpu: number, ts: string, name: string) => `${comm}|${pid}|${cpu}|${ts}|${name}`;
        const ours = got.events.map((e) => key(e.comm, e.pid, e.cpu, e.ts.toFixed(6), e.name)).sort();
        expect(ours).toEqual(report.map((l) => key(l.comm, l.pid, l.cpu, l.ts, l.name)).sort());
        // bprint: report prints `ip: text` after the name; so do we (the text from the saved printk formats)
        const ourPrints = got.events
          .filter((e) => e.name === 'bprint')
          .map((e) => `${e.cpu} ${e.ts.toFixed(6)} ${e.payload}`)
          .sort();
        const theirs = report
          .filter((l) => l.name === 'bprint')
          .map((l) => `${l.cpu} ${l.ts} ${l.text.trimEnd()}`)
          .sort();
        expect(ourPrints).toEqual(theirs);
        expect(ourPrints.length).toBe(501);
      });

      it('renamed `unknown`, through the ingest: sniffed by content, every byte used, the same count', () => {
        const cap = ingestFiles([['unknown', bytes]], 7919);
        expect(cap.files[0]).toMatchObject({ kind: 'trace_cmd_dat', bytes: { total: bytes.length, used: bytes.length, unused: 0 } });
        expect(cap.trace.eventCount).toBe(report.length);
      });
    });
  }
});
