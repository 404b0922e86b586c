// The flame graph by function and by call site, cut from the top down (flame-culled.ts), against Brendan Gregg's
// flamegraph.pl (../shared/peer-tools, perl: an integration test). The input is a stack_map_bin of
// each generator's shape (testing/kernels.ts: call-graph walks, random frames) with its kallsyms and
// a trace citing each slot; the peer gets the same stacks as folded lines made without the app's
// reader: each ip named by the plain BigInt search over the generated symbols, the offset dropped
// (a function) or kept (a call site), root first, weighed by the trace's citations. Every rectangle flamegraph.pl draws
// (name, samples, row) must be a node of ours with that name, value and depth, and the other way.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeStackMapBin } from '../formats/stack-map-write.ts';
import { line } from '../testing/explorer-fixtures.ts';
import { kernel, plainSymbolizer, stacks, type Shape } from '../testing/kernels.ts';
import { ingestFiles } from '../testing/test-helpers.ts';
import { ALL, type Selection } from './api.ts';
import { ExplorerData } from './explorer-data.ts';
import { flame, stackWeights } from './flame.ts';
import { tableTotals } from './flame-totals.ts';

const FLAMEGRAPH = '/work/shared/peer-tools/flamegraph.pl';

/** flamegraph.pl's rectangles as `row name samples` (row 0 its root, "all"), sorted. */
function peerRects(folded: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'flame-peer-'));
  const path = join(dir, 'in.folded');
  writeFileSync(path, folded);
  const svg = execFileSync('perl', [FLAMEGRAPH, '--minwidth', '0', path], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const rects: { name: string; samples: number; y: number }[] = [];
  const re = /<title>([^<]*) \(([\d,]+) samples?, [\d.]+%\)<\/title><rect x="[\d.]+" y="([\d.]+)"/g;
  for (let m = re.exec(svg); m; m = re.exec(svg))
    rects.push({ name: m[1].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'), samples: Number(m[2].replace(/,/g, '')), y: Number(m[3]) });
  // rows are drawn upwards from the root: the largest y is row 0
  const ys = [...new Set(rects.map((r) => r.y))].sort((a, b) => b - a);
  return rects.map((r) => `${ys.indexOf(r.y)} ${r.name} ${r.samples}`).sort();
}

describe('the flame graph by function and by call site against flamegraph.pl', () => {
  for (const shape of ['callgraph', 'random'] as Shape[]) {
    it(`${shape} stacks from a stack_map_bin and kallsyms: every rectangle, its name, samples and row`, () => {
      for (const seed of [1, 2, 3]) {
        const k = kernel({ seed, functions: 150, modules: 10, repeatEvery: 0, aliasEvery: 0 });
        const ips = stacks(k, shape, 120, seed, 24);
        const bin = writeStackMapBin({ version: 2, generation: 1, littleEndian: true, records: ips.map((x, slot) => ({ slot, refCount: 1, ips: x })) });
        // slot s cited 1 + s % 3 times
        const cites = ips.map((_, s) => 1 + (s % 3));
        const trace = ['# tracer: nop'];
        let n = 0;
        ips.forEach((_, slot) => {
          for (let c = 0; c < cites[slot]; c++) {
            const ts = (10 + n++ * 0.001).toFixed(6);
            trace.push(line('p-1', slot % 3, ts, 'ev: x'), line('p-1', slot % 3, ts, `<stack_id ${slot} gen 1>`));
          }
        });
        const d = new ExplorerData(
          ingestFiles([
            ['kallsyms', k.text],
            ['stack_map_bin', bin],
            ['trace', trace.join('\n') + '\n'],
          ]),
        );
        const ours = (selection: Selection, minShare = 0, granularity: 'function' | 'site' = 'function') => {
          const t = flame(d, {
            mode: 'top-down',
            selection,
            weight: 'occurrences',
            granularity,
            focus: null,
            highlightStack: null,
            cull: { minShare, zoom: [] },
          }).tree;
          return Array.from(t.value, (v, i) => `${t.depth[i]} ${i === 0 ? 'all' : t.names[t.name[i]]} ${v}`).sort();
        };
        // the peer's input, made without the app: names by the plain search, offsets dropped, root first
        const plain = plainSymbolizer(k.lines);
        const folded = (slots: number, site = false) =>
          ips
            .slice(0, slots)
            .map(
              (x, s) =>
                [...x]
                  .reverse()
                  .map((ip) => (site ? plain.key(ip) : plain.key(ip).replace(/\+0x[0-9a-f]+$/, '')))
                  .join(';') + ` ${cites[s]}`,
            )
            .join('\n') + '\n';
        expect(ours(ALL).length).toBeGreaterThan(20);
        expect(ours(ALL), `seed ${seed}`).toEqual(peerRects(folded(ips.length)));
        // every stack weighed: the dense totals, the children from the parent column (table-children.ts)
        expect(tableTotals(d, stackWeights(d, ALL, 'occurrences')).touched, `seed ${seed}: the dense totals`).toBeNull();
        // cut at 2% of the root: the peer's rectangles of at least that many samples, the narrower
        // ones (summed apart, never grouped into a node) left out
        const total = cites.reduce((a, b) => a + b, 0);
        const wide = peerRects(folded(ips.length)).filter((r) => Number(r.slice(r.lastIndexOf(' ') + 1)) >= 0.02 * total);
        expect(wide.length).toBeLessThan(ours(ALL).length);
        expect(ours(ALL, 0.02), `seed ${seed}, cut at 2%`).toEqual(wide);
        // the first two slots' events only (1 + 2 of them): so few stacks that the totals walk their paths alone (sparse)
        const few: Selection = { ...ALL, range: [10, 10 + 2 * 0.001 + 0.0005] };
        expect(tableTotals(d, stackWeights(d, few, 'occurrences')).touched, `seed ${seed}: the sparse totals`).not.toBeNull();
        expect(ours(few), `seed ${seed}, two slots`).toEqual(peerRects(folded(2)));
        // by call site (the page's default): the frames with their offsets, every stack and the
        // sparse two slots (the cut over table nodes, its names interned by frame id)
        expect(ours(ALL, 0, 'site'), `seed ${seed}, by site`).toEqual(peerRects(folded(ips.length, true)));
        expect(ours(few, 0, 'site'), `seed ${seed}, by site, two slots`).toEqual(peerRects(folded(2, true)));
      }
    }, 120_000);
  }
});
