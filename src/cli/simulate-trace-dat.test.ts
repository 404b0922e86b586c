// `cli simulate --format trace-dat`, end to end: the same run written as text and as trace.dat
// gives the same `summary --json`, and `trace-cmd report` (the peer tool, run here) reads the
// trace.dat as holding what the text trace holds. One simulated CPU whose own resets
// (--cpu-resets-every) make the generations: a run of one CPU with no host resets is the same
// run each time but for its timestamps (checked below through the reports), so a text run and a
// trace.dat run can be compared record for record.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliArgv } from './test-io.ts';
import { hasTraceCmd, reportText } from '../core/testing/trace-dat.ts';
import { parseSimulateArgs } from './simulate.ts';
import { UsageError } from './usage.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = (args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(...cliArgv(...args), { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 }, (err, out, stderr) =>
      err ? reject(new Error(`cli ${args[0]} failed: ${err.message}\n${stderr}`)) : resolve(out),
    ),
  );

const MODES: Record<string, string[]> = {
  // v7: 4-byte ids, stack_map_bin v1 dumps
  v7: ['--mode', 'v7', '--bits', '10', '--stacks', '80'],
  // v8 with stack_map_bin v2 dumps
  v8: ['--mode', 'v8', '--v8-bin', '--bits', '10', '--stacks', '60'],
};
// stacks deeper than 64 frames bypass the map: the full-stack fallbacks
const COMMON = ['--depth', '4-70', '--cpus', '1', '--events', '1500', '--resets', '0', '--cpu-resets-every', '600', '--seed', '11'];
const KEYS = ['events', 'cookies', 'fullStacks', 'resolved', 'unresolved', 'generations', 'uniqueStacks', 'top'] as const;

/** trace-cmd is this test's peer tool: CI must have it, a machine without it skips with a reason. */
const needTraceCmd = !hasTraceCmd && !!process.env.CI;

interface Side {
  dir: string;
  report: { ledger: Record<string, number>; generations: number; files: string[] };
  summary: Record<string, unknown> & { events: number; cookies: number; fullStacks: number; diagnostics: unknown[] };
}

describe('simulate --format', () => {
  it('text by default, trace-dat on request (with a scenario too), anything else a usage error', () => {
    expect(parseSimulateArgs(['--out', 'd']).format).toBe('text');
    expect(parseSimulateArgs(['--format', 'trace-dat', '--out', 'd']).format).toBe('trace-dat');
    expect(parseSimulateArgs(['--scenario', 'v8-detects', '--format', 'trace-dat', '--out', 'd'])).toMatchObject({
      scenario: 'v8-detects',
      format: 'trace-dat',
    });
    expect(() => parseSimulateArgs(['--format', 'dat', '--out', 'd'])).toThrow(UsageError);
    expect(() => parseSimulateArgs(['--format'])).toThrow('--format needs a value');
    expect(() => parseSimulateArgs(['--out', 'x', '--format=text=1'])).toThrow('--format must be text or trace-dat');
  });
});

describe('simulate --format trace-dat: the trace.dat capture reads as its text capture', () => {
  const base = mkdtempSync(join(tmpdir(), 'smx-simdat-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  for (const [mode, flags] of Object.entries(MODES)) {
    describe(mode, () => {
      const sides: Promise<{ text: Side; dat: Side }> = (async () => {
        const one = async (format: 'text' | 'trace-dat'): Promise<Side> => {
          const dir = join(base, `${mode}-${format}`);
          const report = JSON.parse(await run(['simulate', ...flags, ...COMMON, '--format', format, '--out', dir, '--json']));
          const files = readdirSync(dir).map((f) => join(dir, f));
          return { dir, report, summary: JSON.parse(await run(['summary', '--json', ...files])) };
        };
        const [text, dat] = await Promise.all([one('text'), one('trace-dat')]);
        return { text, dat };
      })();
      // a rejection is reported by the tests that await it
      sides.catch(() => {});

      it('writes trace.dat in place of trace, the dumps beside it, and the runs are the same run', async () => {
        const { text, dat } = await sides;
        expect(text.report.files).toContain('trace');
        expect(text.report.files).not.toContain('trace.dat');
        expect(dat.report.files).toContain('trace.dat');
        expect(dat.report.files).not.toContain('trace');
        expect(dat.report.files.filter((f) => f !== 'trace.dat').sort()).toEqual(text.report.files.filter((f) => f !== 'trace').sort());
        expect(dat.report.files.some((f) => f.startsWith('stack_map'))).toBe(true);
        // the simulator's own truth of each record, the same in both runs
        expect(dat.report.ledger).toEqual(text.report.ledger);
        expect(dat.report.generations).toBeGreaterThan(1);
        expect(dat.report.ledger.full).toBeGreaterThan(0);
      }, 240_000);

      it('summary --json: the same events, cookies, full stacks, resolution, generations, stacks and top', async () => {
        const { text, dat } = await sides;
        expect(dat.summary.diagnostics).toEqual([]);
        expect(text.summary.diagnostics).toEqual([]);
        // the text trace's ids its events' call_site= contradicts are not resolved there; a trace.dat's are not judged (trace-columns.ts)
        const textContradicted = (text.summary.status as Record<string, number>).contradicted ?? 0;
        expect((dat.summary.status as Record<string, number>).contradicted ?? 0).toBe(0);
        expect(textContradicted).toBeLessThanOrEqual(text.report.ledger.wrong);
        const datSide = (k: (typeof KEYS)[number]) =>
          k === 'resolved'
            ? (dat.summary.resolved as number) - textContradicted
            : k === 'unresolved'
              ? (dat.summary.unresolved as number) + textContradicted
              : k === 'top'
                ? null
                : dat.summary[k];
        for (const k of KEYS) expect([k, datSide(k)]).toEqual([k, k === 'top' ? null : text.summary[k]]);
        if (textContradicted === 0) expect(dat.summary.top).toEqual(text.summary.top);
        // the simulator's truth as the second method: every record counted once
        const l = dat.report.ledger;
        expect(dat.summary.cookies).toBe(l.ids);
        expect(dat.summary.fullStacks).toBe(l.full);
        expect(dat.summary.resolved).toBe(l.correct + l.wrong);
        expect(dat.summary.unresolved).toBe(l.detected + l.unresolved);
        // its ledger.json lines up with either trace (a trace.dat keeps the CPUs apart, the text merges them by time)
        for (const side of [dat, text]) expect(side.summary.simTruth).toMatchObject({ matched: true, records: side.report.ledger.records });
        if (mode !== 'v8') expect((dat.summary.simTruth as { unverifiedWrong: number }).unverifiedWrong).toBe(l.wrong);
        if (mode === 'v8') expect((dat.summary.generations as number[]).length).toBeGreaterThan(1);
      }, 240_000);

      const title = "trace-cmd report prints the text trace's records from the trace.dat";
      it.skipIf(!hasTraceCmd && !needTraceCmd)(
        hasTraceCmd ? title : `${title} (skipped: trace-cmd is not installed; with CI set it fails instead)`,
        async () => {
          if (!hasTraceCmd) throw new Error("CI is set and trace-cmd is missing: install Debian's trace-cmd, this test's peer tool");
          const { text, dat } = await sides;
          // trace-cmd's lines, counted here: `comm-pid [cpu] ts: name: text`, frame lines (`=> ...`) apart
          const byName = new Map<string, number>();
          const idsReport: string[] = [];
          const report = reportText(['-i', join(dat.dir, 'trace.dat')]);
          for (const line of report.split('\n')) {
            const open = line.indexOf(' [');
            const close = line.indexOf('] ', open);
            const colon = line.indexOf(': ', close);
            if (open < 0 || close !== open + 5 || colon < 0 || !/^\d{3}$/.test(line.slice(open + 2, close))) continue;
            const rest = line.slice(colon + 2);
            const nameEnd = rest.indexOf(':');
            const name = rest.slice(0, nameEnd);
            byName.set(name, (byName.get(name) ?? 0) + 1);
            if (name === 'stack_id') idsReport.push(rest.slice(nameEnd + 1).trim());
          }
          // the text trace's own lines, counted the same plain way
          const idsText: string[] = [];
          let textEvents = 0;
          let textStacks = 0;
          for (const line of readFileSync(join(text.dir, 'trace'), 'utf8').split('\n')) {
            if (line.startsWith('#') || !line.includes(']')) continue;
            const payload = line.slice(line.indexOf(': ', line.indexOf(']')) + 2);
            if (payload.startsWith('<stack_id ')) idsText.push(payload.trim());
            else if (payload.startsWith('<stack trace>')) textStacks++;
            else if (payload.startsWith('kmem_cache_alloc:')) textEvents++;
          }
          expect([...byName.keys()].sort()).toEqual(['kernel_stack', 'kmem_cache_alloc', 'stack_id']);
          expect(byName.get('kmem_cache_alloc')).toBe(textEvents);
          expect(byName.get('kernel_stack')).toBe(textStacks);
          expect(byName.get('stack_id')).toBe(idsText.length);
          // the event count as the summary has it, and the ids and cookies as the kernel prints them
          expect(byName.get('kmem_cache_alloc')).toBe(dat.summary.events);
          expect(byName.get('stack_id')).toBe(dat.summary.cookies);
          expect(idsReport).toEqual(idsText);
          expect(idsText.length).toBeGreaterThan(0);
          expect(idsText.every((s) => (mode === 'v8' ? / gen \d+>$/.test(s) : /^<stack_id \d+>$/.test(s)))).toBe(true);
          // trace-cmd's text (`stack_id: <stack_id N gen G>`) read with the dumps resolves as the trace.dat does
          const reportDir = join(dat.dir, '..', `${mode}-report`);
          mkdirSync(reportDir, { recursive: true });
          writeFileSync(join(reportDir, 'report.txt'), report);
          const dumps = readdirSync(dat.dir)
            .filter((f) => f !== 'trace.dat')
            .map((f) => join(dat.dir, f));
          const fromReport = JSON.parse(await run(['summary', '--json', join(reportDir, 'report.txt'), ...dumps]));
          // report's text is judged by its call_site= fields (contradicted: not resolved), the trace.dat is not
          const c = (fromReport.status.contradicted as number) ?? 0;
          const fromSide = (k: string) => (k === 'resolved' ? fromReport.resolved + c : k === 'unresolved' ? fromReport.unresolved - c : fromReport[k]);
          for (const k of ['events', 'cookies', 'fullStacks', 'resolved', 'unresolved', 'generations', 'uniqueStacks'])
            expect([k, fromSide(k)]).toEqual([k, dat.summary[k]]);
        },
        240_000,
      );
    });
  }
});

describe('simulate --format trace-dat: the host resets', () => {
  const title = "the trace_marker writes before each reset are print events: trace-cmd report's equal what the explorer reads";
  it.skipIf(!hasTraceCmd && !needTraceCmd)(
    hasTraceCmd ? title : `${title} (skipped: trace-cmd is not installed; with CI set it fails instead)`,
    async () => {
      if (!hasTraceCmd) throw new Error("CI is set and trace-cmd is missing: install Debian's trace-cmd, this test's peer tool");
      const dir = mkdtempSync(join(tmpdir(), 'smx-simdat-marks-'));
      try {
        await run(['simulate', '--scenario', 'v7-wrong-stack', '--format', 'trace-dat', '--out', dir, '--json']);
        const files = readdirSync(dir).map((f) => join(dir, f));
        const summary = JSON.parse(await run(['summary', '--json', ...files]));
        // trace-cmd's lines: the markers (`sh-1 [000] ts: print: tracing_mark_write: stackmap reset N`) and the ids before the last
        const marks: { ts: number; text: string }[] = [];
        const ids: number[] = [];
        let allocs = 0;
        for (const line of reportText(['-i', join(dir, 'trace.dat')]).split('\n')) {
          const m = /\] +(\d+\.\d+): (print|stack_id|kmem_cache_alloc): +(.*)$/.exec(line);
          if (!m) continue;
          if (m[2] === 'kmem_cache_alloc') {
            allocs++;
            continue;
          }
          if (m[2] === 'print') marks.push({ ts: Number(m[1]), text: m[3].trim() });
          else ids.push(Number(m[1]));
        }
        expect(marks.length).toBeGreaterThan(0);
        // consecutive resets, from the oldest one CPU 0's ring still holds
        const first = Number(/ (\d+)$/.exec(marks[0].text)?.[1]);
        expect(marks.map((x) => x.text)).toEqual(marks.map((_, k) => `tracing_mark_write: stackmap reset ${first + k}`));
        const last = marks[marks.length - 1].ts;
        expect(summary.beforeReset.resets).toBe(marks.length);
        expect(summary.beforeReset.lastTs).toBeCloseTo(last, 6);
        // the ids timed before the last marker, as trace-cmd prints them (times to the microsecond: within the marker's own microsecond, either side)
        const before = ids.filter((t) => t < last).length;
        const atMark = ids.filter((t) => t === last).length;
        expect(summary.beforeReset.of).toBe(ids.length);
        expect(summary.beforeReset.ids).toBeGreaterThanOrEqual(before);
        expect(summary.beforeReset.ids).toBeLessThanOrEqual(before + atMark);
        // the events: kmem_cache_alloc and the markers
        expect(summary.events).toBe(allocs + marks.length);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
});
