import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writeStackMapText } from '../formats/stack-map-write.ts';
import { Ingest } from './ingest.ts';
import { RecordStatus } from './trace-columns.ts';

// resolveCookies reads each generation's slots through an array (when the slot numbers are
// dense enough) instead of the dump's map: against a plain resolution written here from the
// dumps' own records, on random v8 dumps (dense or sparse slots, some generations without a
// dump) and cookies (slots held or not, up to 5M). (A u32 slot beyond 2^31 wraps negative in the
// Int32 column, as it did before, so it is left out.)
describe('resolveCookies against a plain lookup', () => {
  // dense slots (read through the array) or some far apart (through the map)
  const dump = fc
    .record({
      generation: fc.integer({ min: 0, max: 5 }),
      small: fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 10 }),
      far: fc.uniqueArray(fc.integer({ min: 13, max: 5_000_000 }), { maxLength: 4 }),
      dense: fc.boolean(),
    })
    .map((d) => ({ generation: d.generation, slots: d.dense ? d.small : [...d.small, ...d.far] }));
  const cookie = fc.record({ slot: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 5_000_000 })), generation: fc.integer({ min: 0, max: 6 }) });
  it('every cookie gets the status and stack the dump of its generation gives', () => {
    fc.assert(
      fc.property(fc.uniqueArray(dump, { selector: (d) => d.generation, maxLength: 4 }), fc.array(cookie, { maxLength: 40 }), (dumps, cookies) => {
        const ingest = new Ingest();
        const frames = (g: number, slot: number) => [`f${g}_${slot}+0x1`, 'root+0x2'];
        const byGen = new Map<number, Set<number>>();
        for (const [k, d] of dumps.entries()) {
          byGen.set(d.generation, new Set(d.slots));
          const text = writeStackMapText(d.slots.map((slot) => ({ slot, refCount: 1, frames: frames(d.generation, slot) })), { version: 'v8', generation: d.generation });
          const p = ingest.open(`stack_map.${k}`);
          p.push(new TextEncoder().encode(text));
          p.end();
        }
        const lines = cookies.map((c, i) => `            bash-1    [000] .....   ${(1 + i / 1e6).toFixed(6)}: <stack_id ${c.slot} gen ${c.generation}>`);
        const p = ingest.open('trace');
        p.push(new TextEncoder().encode('# tracer: nop\n' + lines.join('\n') + '\n'));
        p.end();
        const cap = ingest.finish();
        const t = cap.trace;
        expect(t.recordCount).toBe(cookies.length);
        for (const [i, c] of cookies.entries()) {
          const held = byGen.get(c.generation);
          const want = !held ? RecordStatus.NoDump : held.has(c.slot) ? RecordStatus.Resolved : RecordStatus.NoSlot;
          expect(t.recStatus.get(i)).toBe(want);
          if (want === RecordStatus.Resolved) expect(cap.stacks.framesOf(t.recStack.get(i))).toEqual(frames(c.generation, c.slot));
          else expect(t.recStack.get(i)).toBe(-1);
        }
      }),
      { numRuns: 150 },
    );
  });
});
