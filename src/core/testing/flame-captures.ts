import fc from 'fast-check';
import { ExplorerData } from '../query/explorer-data.ts';
import type { FlameTreeFrames } from '../query/flame-frames.ts';
import { line } from './explorer-fixtures.ts';
import { ingestFiles } from './test-helpers.ts';

// Small captures for the flame graph's property tests: a trace of full stacks and v8 cookies
// into one dump, functions with several offsets each so nodes merge several frames.

/** pre-order lines "depth name value/self [frame:weight ...]" of a flame tree */
export function treeLines(t: FlameTreeFrames): string[] {
  return Array.from(t.value, (v, i) => {
    const frames: string[] = [];
    for (let j = t.frameStart[i]; j < t.frameStart[i + 1]; j++) frames.push(`${t.frameNames[t.frameOf[j]]}:${t.frameValue[j]}`);
    return `${t.depth[i]} ${t.names[t.name[i]]} ${v}/${t.self[i]} [${frames.join(' ')}]`;
  });
}

export const FNS = ['f', 'g', 'h', 'k', 'm'];
/** a stack, leaf first: functions with one of three offsets, so nodes merge several frames */
export const stackArb = fc.array(fc.tuple(fc.constantFrom(...FNS), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 7 });

export function capture(recs: { cpu: number; stack: [string, number][] }[], dumps: [string, number][][]): ExplorerData {
  const lines = ['# tracer: nop'];
  recs.forEach((r, i) => {
    const ts = (10 + i * 0.001).toFixed(6);
    lines.push(line('p-1', r.cpu, ts, 'ev: x'));
    if (r.stack.length) lines.push(line('p-1', r.cpu, ts, '<stack trace>'), ...r.stack.map(([f, o]) => ` => ${f}+0x${o}/0x40`));
    else lines.push(line('p-1', r.cpu, ts, `<stack_id ${i % dumps.length} gen 1>`));
  });
  const dump = dumps
    .map((st, slot) => `stack_id ${slot} gen 1 [ref ${slot + 2}, depth ${st.length}]\n` + st.map(([f, o]) => ` => ${f}+0x${o}/0x40\n`).join('') + '\n')
    .join('');
  return new ExplorerData(
    ingestFiles([
      ['trace', lines.join('\n') + '\n'],
      ['map', dump],
    ]),
  );
}

export const recArb = fc.record({ cpu: fc.integer({ min: 0, max: 2 }), stack: fc.oneof(stackArb, fc.constant([] as [string, number][])) });

/** the records and the three dumped stacks of a capture(), as the property tests draw them */
export const recordsArb = fc.array(recArb, { minLength: 1, maxLength: 30 });
export const dumpsArb = fc.array(stackArb, { minLength: 3, maxLength: 3 });
