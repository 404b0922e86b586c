import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ExplorerData } from '../query/explorer-data.ts';
import { ALL } from '../query/api.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { realDescribe, realTrace, realTracePath } from '../testing/real-traces.ts';
import { exportSelection } from './exports.ts';
import { tidyGeneric } from './stackcollapse.ts';

/**
 * The second method is FlameGraph's own stackcollapse-perf.pl (../shared/peer-tools/, run with
 * perl): its output on a file is what the compatible folded export must print, byte for byte.
 */
const SCRIPT = join(import.meta.dirname, '../../../../shared/peer-tools/stackcollapse-perf.pl');
const perl = (file: string) => execFileSync('perl', [SCRIPT, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const hasPerl = (() => {
  try {
    execFileSync('perl', ['-e', '1']);
    return true;
  } catch {
    return false;
  }
})();

/** ours, on the file read whole, in 7-byte chunks, and named `unknown` (sniffed by content) */
function ours(name: string, bytes: Uint8Array): string[] {
  return [ingestFiles([[name, bytes]]), ingestFiles([[name, bytes]], 7), ingestFiles([['unknown', bytes]], 3)].map((c) =>
    exportSelection(new ExplorerData(c), 'folded', ALL, { stackcollapse: true }),
  );
}

const REAL = [
  'flamegraph-perf-dd-stacks-01.txt',
  'inferno-perf-cpp-stacks-std-function.txt',
  'inferno-perf-go-stacks.txt',
  'inferno-perf-java-inline.txt',
  'inferno-perf-single-event.txt',
  'inferno-perf-versioned-vmlinux.txt',
  'inferno-perf-weird-stack-line.txt',
];

realDescribe.skipIf(!hasPerl)('the stackcollapse-compatible folded export against stackcollapse-perf.pl on real perf script output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stackcollapse-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of REAL) {
    it(`${file}: line for line`, () => {
      const expected = perl(realTracePath(file));
      for (const out of ours(file, realTrace(file))) expect(out).toBe(expected);
    });
    it(`${file} ending in a blank line (the script counts its last sample then): line for line, and not empty`, () => {
      const bytes = realTrace(file);
      const path = join(dir, file);
      writeFileSync(path, Buffer.concat([bytes, Buffer.from('\n\n')]));
      const expected = perl(path);
      expect(expected.length).toBeGreaterThan(0);
      for (const out of ours(file, new Uint8Array(Buffer.concat([bytes, Buffer.from('\n\n')])))) expect(out).toBe(expected);
    });
  }
});

realDescribe.skipIf(!hasPerl)('the command line: export --format folded --stackcollapse', () => {
  it('prints what the script prints, on stdout; --format=folded --granularity site keeps the offsets', () => {
    const file = realTracePath('inferno-perf-java-inline.txt');
    // the command line the integration project's setup bundled (scripts/cli-bundle.setup.ts)
    const main = inject('cliBundle');
    const run = (...args: string[]) => execFileSync(process.execPath, [main, 'export', ...args, file], { encoding: 'utf8' });
    expect(run('--format', 'folded', '--stackcollapse')).toBe(perl(file));
    const site = run('--format=folded', '--granularity=site');
    const fn = run('--format=folded');
    expect(site).toMatch(/\+0x[0-9a-f]+/);
    expect(fn).not.toMatch(/\+0x[0-9a-f]+ /);
    // the same samples either way
    const total = (t: string) =>
      t
        .trim()
        .split('\n')
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    expect(total(site)).toBe(total(fn));
  }, 60_000);
});

/** Inputs in shapes the real files lack, each folded by the script itself as the expected answer. */
const SHAPES: [string, string][] = [
  [
    'older perf: callchain lines without leading blanks, headers without a time (issue 34, 18)',
    'java 19983 cycles: \nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\nffffffff81015efc intel_pmu_enable_all+0x1f ([kernel.kallsyms])\n' +
      '7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n7f722d13b8e0 [unknown] (/usr/lib/jvm/libjvm.so)\n\n' +
      'java 19983 cycles: \nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n\n' +
      'java 19990 cycles: \nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n\tffffffff81015efc intel_pmu_enable_all ([kernel.kallsyms])\n\n',
  ],
  [
    'a frame whose symbol perf printed empty (IP, two blanks, (DSO)): the script names it a blank, not after its DSO (issue 34, 18)',
    'ls 5 [000] 1.500000: 1 cycles:\n\t7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)\n\t7f1e2215d100 main (/bin/ls)\n\n' +
      'ls 5 [000] 1.600000: 1 cycles:\n\t7f1e2215d058   (/lib/x86_64-linux-gnu/libc-2.15.so)\n\t7f1e2215d100 main (/bin/ls)\n\n' +
      'ls 5 [000] 1.700000: 3 cycles:\n7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)\n\t7f1e2215d100 [unknown] (/bin/ls)\n\n',
  ],
  [
    'no timestamps (older perf, perf script -F comm,pid,event,ip,sym,dso)',
    'java 19983 cycles:\n\tffffffff8103d0ca native_write_msr_safe+0x6 ([kernel.kallsyms])\n\tffffffff81023b8f intel_pmu_enable_all+0x1f ([kernel.kallsyms])\n\n' +
      'java 19983 cycles:\n\tffffffff8103d0c4 native_write_msr_safe+0x0 ([kernel.kallsyms])\n\tffffffff81023b8f intel_pmu_enable_all+0x1f ([kernel.kallsyms])\n\n' +
      'java 19984/19990 [001] cycles:\n\t7f00 Ljava/lang/Thread;::run+0x10 (/tmp/perf-19983.map)\n\n',
  ],
  [
    'two events: only the first one is folded; periods summed',
    'dd 1 [000] 1.000001: 100 cycles:\n\t a vfs_read+0x10 ([kernel.kallsyms])\n\n' +
      'dd 1 [000] 1.000002: 250 cycles:\n\t b vfs_read+0x14 ([kernel.kallsyms])\n\n' +
      'dd 1 [000] 1.000003: 7 page-faults:\n\t c do_page_fault+0x1 ([kernel.kallsyms])\n\n',
  ],
  [
    'names the script tidies: arguments, (anonymous namespace), Go methods, ; and quotes, inlined ->',
    'my prog 12 3.5: 1 cycles:u:\n' +
      '\t1 foo(int, char const*) (/bin/p)\n' +
      '\t2 (anonymous namespace)::bar(std::string) const (/bin/p)\n' +
      '\t3 main.(*T).Method+0x9 (/bin/p)\n' +
      '\t4 weird;name\'with"quotes (/bin/p)\n' +
      '\t5 outer->inner->leafmost+0x3 (/bin/p)\n' +
      '\t6 [unknown] (/usr/lib/libc.so.6)\n' +
      '\t7 [unknown] ([unknown])\n\n' +
      'my prog 12 3.6: 1 cycles:u:\n\n',
  ],
];

describe.skipIf(!hasPerl)('the stackcollapse-compatible folded export against stackcollapse-perf.pl on other shapes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stackcollapse-shapes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  SHAPES.forEach(([what, text], i) => {
    it(what, () => {
      const path = join(dir, `perf-${i}.txt`);
      writeFileSync(path, text);
      const expected = perl(path);
      expect(expected.split('\n').length).toBeGreaterThan(1);
      for (const out of ours(`perf-${i}.txt`, new TextEncoder().encode(text))) expect(out).toBe(expected);
    });
  });
});

describe('tidyGeneric', () => {
  it('cuts at the first ( that opens no (anonymous namespace), keeps .(...). names, makes ; : and drops quotes', () => {
    expect(tidyGeneric('foo(int)')).toBe('foo');
    expect(tidyGeneric('(anonymous namespace)::f(int)')).toBe('(anonymous namespace)::f');
    expect(tidyGeneric('main.(*T).M')).toBe('main.(*T).M');
    expect(tidyGeneric(`a;b"c'd`)).toBe('a:bcd');
  });
});
