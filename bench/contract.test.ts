// The scoreboard's own logic: the contract check, the README splice and --only's selection.
import { describe, expect, it } from 'vitest';
import { parseRows, rowProblem } from './contract.ts';
import { SCRIPTS, selects, sizeless, table, withTable } from './run.ts';

const good = { id: 'flame-peers-100k', what: 'x', value: 12.5, unit: 'ms' };

describe('parseRows', () => {
  it('takes the last non-empty line and its rows', () => {
    const out = `progress...\n{"not":"this"}\n${JSON.stringify({ rows: [good] })}\n\n`;
    expect(parseRows(out)).toEqual([good]);
  });
  it.each([
    ['', 'printed nothing'],
    ['hello', 'not JSON'],
    ['{"rows": []}', 'empty'],
    ['{"row": 1}', 'no "rows"'],
    [JSON.stringify({ rows: [good, good] }), 'twice'],
    [JSON.stringify({ rows: [{ ...good, id: 'Not_Kebab' }] }), 'kebab'],
    [JSON.stringify({ rows: [{ ...good, value: null }] }), 'finite'],
    [JSON.stringify({ rows: [{ ...good, value: 'NaN' }] }), 'finite'],
    [JSON.stringify({ rows: [{ ...good, baseline: { what: 'b', value: 1 } }] }), 'baseline'],
    [JSON.stringify({ rows: [{ ...good, peers: [{ name: 'd3', value: null, unit: 'ms' }] }] }), 'no note'],
    [JSON.stringify({ rows: [{ ...good, met: 'yes' }] }), 'met'],
  ])('rejects %s', (out, why) => {
    const r = parseRows(out);
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toContain(why);
  });
  it('accepts a peer with no value when its note says why', () => {
    expect(rowProblem({ ...good, peers: [{ name: 'd3', value: null, unit: 'ms', note: 'not drawn in 240 s' }] })).toBeNull();
  });
});

describe('the README table', () => {
  const rows = [
    {
      ...good,
      baseline: { what: 'speedscope', value: 25, unit: 'ms' },
      ratio: 0.5,
      goal: 'faster',
      met: true,
      peers: [{ name: 'd3', value: null, unit: 'ms', note: 'not drawn' }],
    },
    { id: 'big-trace-1gb', what: 'a | b', value: null, unit: '', failed: 'exit 1' },
  ];
  it('has one line per row, every column, pipes escaped', () => {
    const t = table(rows).split('\n');
    expect(t).toHaveLength(4);
    expect(t[2]).toBe('| `flame-peers-100k` | x | 12.5 ms | 25 ms (speedscope) | 0.5x | d3: none (not drawn) | faster | met |');
    expect(t[3]).toBe('| `big-trace-1gb` | a \\| b | — |  |  |  |  | **failed**: exit 1 |');
  });
  it('replaces only what is between the markers, and again', () => {
    const readme = 'head\n<!-- results:start -->\nold\n<!-- results:end -->\ntail\n';
    const once = withTable(readme, 'new');
    expect(once).toBe('head\n<!-- results:start -->\nnew\n<!-- results:end -->\ntail\n');
    expect(withTable(once, 'newer')).toBe('head\n<!-- results:start -->\nnewer\n<!-- results:end -->\ntail\n');
    expect(withTable('no markers\n', 't')).toBe('no markers\n\n## Results\n\n<!-- results:start -->\nt\n<!-- results:end -->\n');
  });
});

describe('--only', () => {
  const names = (want: string[]) => SCRIPTS.filter((s) => selects(s, want)).map((s) => s.file);
  it('selects by row id, id prefix or script name', () => {
    expect(names(['flame-peers-100k'])).toEqual(['peers.ts']);
    expect(names(['flame-peers'])).toEqual(['peers.ts']);
    expect(names(['cli-start', 'big-trace-browser'])).toEqual(['cli-start.ts', 'big-trace-browser.ts']);
    expect(names(['nothing-like-it'])).toEqual([]);
  });
  it('drops only a size suffix from an id', () => {
    expect(sizeless('flame-peers-262k')).toBe('flame-peers');
    expect(sizeless('timeline-frame-p95-10m')).toBe('timeline-frame-p95');
    expect(sizeless('cli-start-help')).toBe('cli-start-help');
  });
});
