// The kallsyms reader on a file the kernel wrote: this machine's own /proc/kallsyms (~120,000
// lines on the CI's VM: its text, a module's symbols in brackets when one is loaded, addresses
// zeroed unless read as root), against awk and sort reading the same bytes: the code symbols
// (t, T, w, W) in address order, symbols at one address in file order, each with its module.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createKallsymsParser } from './kallsyms.ts';
import { feedChunks } from '../testing/formats.ts';

const KALLSYMS = '/proc/kallsyms';

describe('kallsyms reader on the running kernel, against awk and sort', () => {
  it('reads every code symbol of /proc/kallsyms, in address order, with its module', () => {
    expect(existsSync(KALLSYMS), 'a Linux machine has /proc/kallsyms').toBe(true);
    // read once, so both see the same bytes (a module loaded meanwhile would change the file)
    const bytes = readFileSync(KALLSYMS);
    // awk: the code symbols as `ADDR NAME MODULE`, then a stable sort on the address (16 lowercase
    // hex digits: their text order is their numeric order)
    const byAwk = execFileSync('sh', ['-c', `awk '$2 ~ /^[tTwW]$/ { m = $4; gsub(/^\\[|\\]$/, "", m); print $1, $3, m }' | LC_ALL=C sort -s -k1,1`], {
      input: bytes,
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    })
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split(' '));
    const lines = Number(execFileSync('sh', ['-c', 'wc -l'], { input: bytes, encoding: 'utf8' }).trim());
    expect(byAwk.length).toBeGreaterThan(1000);

    const ctx = { file: 'kallsyms', diagnostics: new DiagnosticLog('kallsyms'), modules: new Map<string, string>() };
    const got = feedChunks(createKallsymsParser(ctx), new Uint8Array(bytes), 1 << 16);
    expect(got.names.length).toBe(byAwk.length);
    expect(got.names).toEqual(byAwk.map((r) => r[1]));
    const hex = (i: number) => got.hi[i].toString(16).padStart(8, '0') + got.lo[i].toString(16).padStart(8, '0');
    expect(got.names.map((_, i) => hex(i))).toEqual(byAwk.map((r) => r[0].toLowerCase().padStart(16, '0')));
    expect({ total: got.lines.total, used: got.lines.used, unused: got.lines.unused }).toEqual({ total: lines, used: lines, unused: 0 });
    // a module's symbols: the first module awk names for each
    const modules = new Map<string, string>();
    for (const [, name, mod] of byAwk) if (mod && !modules.has(name)) modules.set(name, mod);
    for (const [name, mod] of modules) expect(ctx.modules.get(name)).toBe(mod);
  });
});
