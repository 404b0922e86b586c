// The README against the code it describes: a picture or link that points nowhere, headers that
// differ from what the static hosts get, a table column or a scenario the README does not name,
// is a README that no longer teaches the truth.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { captureOutput } from '../src/cli/test-io.ts';
import { TABLES } from '../src/core/tables/schema.ts';
import { SCENARIO_NAMES } from '../src/core/sim/scenarios.ts';

const root = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');

/** The text of the README section whose heading is `title`, up to the next heading of its level or higher. */
function section(title: string): string {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '') === title);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const level = lines[start].indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

describe('README', () => {
  it('links only to files that exist', () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t));
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((t) => !existsSync(new URL(t, root)))).toEqual([]);
  });

  it('shows the headers public/_headers sends, each line as it is there', () => {
    const headers = readFileSync(new URL('public/_headers', root), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^[A-Za-z-]+: /.test(l));
    expect(headers.map((h) => h.split(':')[0])).toContain('Content-Security-Policy');
    const block = section('Host the built app');
    expect(headers.filter((h) => !block.includes(h))).toEqual([]);
  });

  it('names every table and column that export, sql and the SQL pane share', () => {
    const text = section('Tables (SQL and Parquet)');
    const missing: string[] = [];
    for (const t of TABLES) {
      if (!text.includes(`**${t.name}**`)) missing.push(t.name);
      for (const c of t.columns) if (!text.includes(`\`${c.name}\``)) missing.push(`${t.name}.${c.name}`);
    }
    expect(missing).toEqual([]);
  });

  it('lists every guided scenario, and the walkthrough runs the v7 and v8 pair', () => {
    const table = section('The simulator');
    const listed = [...table.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual([...SCENARIO_NAMES]);
    const walk = section('A walk through the sample');
    expect(walk).toContain('`v7-wrong-stack`');
    expect(walk).toContain('`v8-detects`');
  });

  it('walks to the question users bring: its URL, its numbers (counted from the trace here), and the command line printing what the README shows', async () => {
    const i = readme.indexOf('**8. The question you came with');
    expect(i).toBeGreaterThan(0);
    const step = readme.slice(i, readme.indexOf('![', i));
    const filter = 'kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1403';
    expect(step).toContain(`?filter=${encodeURIComponent(filter)}&weight=field:bytes_alloc`);
    // the second method: the sample's kmem_cache_alloc lines of pid 1403 over 512 bytes, by regex
    const trace = readFileSync(new URL('public/samples/trace', root), 'utf8');
    const bytes = [...trace.matchAll(/-1403 +\[\d+\] \S+ +[\d.]+: kmem_cache_alloc: .*\bbytes_alloc=(\d+)/g)].map((m) => Number(m[1])).filter((b) => b > 512);
    const fmt = (n: number) => n.toLocaleString('en-US');
    expect(step).toContain(`the ${bytes.length} allocations of pid 1403`);
    expect(step).toContain(`${fmt(bytes.reduce((a, b) => a + b, 0))} bytes`);
    // the block: the command as written, run here, prints the lines under it
    const block = /```\n\$ npm run --silent cli -- (top .*)\n([\s\S]*?)```/.exec(step)!;
    const args = block[1].match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'|'$/g, ''));
    expect(args.slice(0, 3)).toEqual(['top', '--filter', filter]);
    const files = (JSON.parse(readFileSync(new URL('public/samples/index.json', root), 'utf8')) as { files: string[] }).files.map(
      (f) => new URL(`public/samples/${f}`, root).pathname,
    );
    const { topCommand } = await import('../src/cli/top.ts');
    const io = captureOutput();
    const code = await topCommand([...args.slice(1, -1), ...files]);
    vi.restoreAllMocks();
    expect(code).toBe(0);
    // the block leaves out the blank line the command ends with
    expect(io.out.join('').trimEnd()).toBe(block[2].trimEnd());
  });

  it('gives the two set-up commands exactly', () => {
    const setup = section('Set up');
    expect(setup).toContain('```sh\nnpm install && npm start\n```');
    expect(setup).toContain('```sh\nnpm test\n```');
  });
});
