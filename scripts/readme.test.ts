// The README against the code it describes: a picture or link that points nowhere, headers that
// differ from what the static hosts get, a table column or a scenario the README does not name,
// is a README that no longer teaches the truth.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

  it('gives the two set-up commands exactly', () => {
    const setup = section('Set up');
    expect(setup).toContain('```sh\nnpm install && npm start\n```');
    expect(setup).toContain('```sh\nnpm test\n```');
  });
});
