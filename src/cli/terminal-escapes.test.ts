import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jsonForTerminal } from '../core/base/control-chars.ts';
import { line } from '../core/testing/explorer-fixtures.ts';
import { summarize } from '../core/capture/summary.ts';
import { exportCommand } from './export.ts';
import { formatSummary } from './format-summary.ts';
import { readFiles } from './read-files.ts';
import { sqlCommand } from './sql.ts';
import { captureOutput, cliArgv } from './test-io.ts';

// A capture an adversary wrote (issue 18.5): comm names, symbols and the file's name carry
// terminal escapes (clear screen, retitle the window), CR, DEL, a C1 CSI and a bidi override.
// Nothing the command line prints may carry them raw: each is written as ls -b writes it.

afterEach(() => vi.restoreAllMocks());

const run = promisify(execFile);

/** a raw control character of any family the escaping covers */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

const ESC = '\x1b';
const NAME = `trace${ESC}[2J\x07`;
const TRACE =
  [
    '# tracer: nop',
    // enough plain lines that the file still reads as text (sniff.ts: few control characters)
    ...Array.from({ length: 60 }, (_, i) => line('sh-3', 1, `99.${String(i).padStart(6, '0')}`, 'sched_switch: x=1')),
    line(`${ESC}[2J-1`, 0, '100.000001', 'kmem_cache_alloc: x=1'),
    line(`${ESC}[2J-1`, 0, '100.000001', '<stack trace>'),
    ` => ${ESC}[31mred+0x1/0x10`,
    ' => b\rx\x7f+0x2/0x20',
    ' => \u009b2J\u202eevil+0x3/0x30',
    line(`${ESC}]0;pwned\x07-2`, 1, '100.000002', 'kmem_cache_alloc: x=1'),
    line(`${ESC}]0;pwned\x07-2`, 1, '100.000002', '<stack trace>'),
    ` => ${ESC}[31mred+0x1/0x10`,
    ' => b\rx\x7f+0x2/0x20',
    ' => \u009b2J\u202eevil+0x3/0x30',
    line('a\tb\\c-4', 1, '100.000003', 'kmem_cache_alloc: x=1'),
  ].join('\n') + '\n';

let dir: string;
let file: string;
let tables: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smx-esc-'));
  file = join(dir, NAME);
  writeFileSync(file, TRACE);
  tables = join(dir, 'tables');
  const io = captureOutput();
  const code = await exportCommand(['--parquet', tables, file]);
  vi.restoreAllMocks();
  expect([code, io.err.join('')]).toEqual([0, '']);
});

async function sql(...args: string[]) {
  const io = captureOutput();
  const code = await sqlCommand(args);
  vi.restoreAllMocks();
  return { code, stdout: io.out.join(''), stderr: io.err.join('') };
}

describe('control characters from a capture are escaped in what the command line prints', () => {
  it('summary: the file name, the top stack frames and diagnostics (text), spawned as a user runs it', async () => {
    const missing = join(dir, `gone${ESC}]0;x\x07`);
    const r = await run(...cliArgv('summary', file, missing), { encoding: 'utf8' });
    expect(r.stdout).not.toMatch(RAW);
    const lines = r.stdout.split('\n');
    // written by hand: each control character as its escape, a backslash doubled
    expect(lines).toContain('  trace\\x1b[2J\\x07  trace_text  72/72 lines used');
    expect(lines).toContain('        2  \\x1b[31mred+0x1 <- b\\rx\\x7f+0x2 <- \\x9b2J\\u202eevil+0x3');
    expect(lines).toContain(`  ${dir}/gone\\x1b]0;x\\x07: file: cannot read: no such file`);
  }, 30_000);

  it('summary --json: DEL, C1 and bidi as \\u escapes (JSON.stringify leaves them raw), the same value parsed back', async () => {
    const s = summarize((await readFiles([file])).capture);
    const j = jsonForTerminal(s, 2);
    expect(j).not.toMatch(RAW);
    expect(j).toContain('"\\u001b[31mred+0x1",\n        "b\\rx\\u007f+0x2",\n        "\\u009b2J\\u202eevil+0x3"');
    expect(j).toContain('"file": "trace\\u001b[2J\\u0007"');
    expect(JSON.parse(j)).toEqual(JSON.parse(JSON.stringify(s)));
    // and the text form, in process, line for line where it names input
    expect(formatSummary(s)).not.toMatch(RAW);
  });

  it("sql: comm names in the table, the JSON and in DuckDB's error messages", async () => {
    const q = 'SELECT task, pid, count(*) AS n FROM events GROUP BY ALL ORDER BY pid';
    const t = await sql(q, tables);
    expect([t.code, t.stderr]).toEqual([0, '']);
    // by hand: widths from the escaped text (\x1b]0;pwned\x07 is 16 characters)
    expect(t.stdout).toBe(
      [
        'task              pid   n',
        '----------------  ---  --',
        '\\x1b[2J             1   1',
        '\\x1b]0;pwned\\x07    2   1',
        'sh                  3  60',
        'a\\tb\\\\c             4   1',
        '(4 rows)',
        '',
      ].join('\n'),
    );
    const j = await sql(q, '--json', tables);
    expect(j.stdout).toBe(
      '{"columns":[{"name":"task","type":"VARCHAR"},{"name":"pid","type":"INTEGER"},{"name":"n","type":"BIGINT"}],' +
        '"rows":[["\\u001b[2J",1,1],["\\u001b]0;pwned\\u0007",2,1],["sh",3,60],["a\\tb\\\\c",4,1]]}\n',
    );
    // a column named by the query, and a value from the capture in DuckDB's message
    const named = await sql(`SELECT 1 AS "x${ESC}[2Jy\u009b"`, tables);
    expect(named.stdout.split('\n')[0]).toBe('x\\x1b[2Jy\\x9b');
    const err = await sql('SELECT CAST(task AS INTEGER) FROM events WHERE pid = 2', tables);
    expect(err.code).toBe(1);
    expect(err.stderr).not.toMatch(RAW);
    expect(err.stderr).toContain("Could not convert string '\\x1b]0;pwned\\x07' to INT32");
  }, 30_000);
});
