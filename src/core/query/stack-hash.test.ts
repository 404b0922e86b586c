import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Explorer } from './explorer.ts';
import { ExplorerData } from './explorer-data.ts';
import { handCapture, sampleCapture, handStacks } from '../testing/explorer-fixtures.ts';
import { exportChromeTrace } from '../export/exports.ts';
import { ALL } from './api.ts';
import { dumpSlotsOfStacks, fnv1a64, isStackHash, stackByHash, stackHash, stackHashOf } from './stack-hash.ts';
import { topStacks } from './top-stacks.ts';

/**
 * The second method: Python's arbitrary-precision integers over Python's own UTF-8 encoder (lone
 * surrogates replaced by U+FFFD first, as TextEncoder does).
 */
const PY = `
import json, sys
out = []
for s in json.load(sys.stdin):
    b = s.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace').encode('utf-8')
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    out.append('%016x' % h)
print(json.dumps(out))
`;
const python = (texts: string[]): string[] => JSON.parse(execFileSync('python3', ['-c', PY], { input: JSON.stringify(texts), encoding: 'utf8' }));

describe('stack_hash', () => {
  it('matches the published FNV-1a 64 vectors', () => {
    // http://www.isthe.com/chongo/tech/comp/fnv/ (offset basis, "a", "foobar")
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('matches Python over frame keys, non-ASCII text and lone surrogates', () => {
    const fixed = [
      'do_syscall_64+0x5b\nentry_SYSCALL_64_after_hwframe+0x44',
      '[FTRACE TRAMPOLINE]\n0xffffffff81234567\n__kmalloc+0x294',
      'é\u00ff\u0800\uffff😀\n\ud800x\udc00',
      'a'.repeat(5000),
    ];
    const random = fc.sample(fc.string({ unit: 'binary', maxLength: 60 }), { numRuns: 300, seed: 9 });
    const texts = [...fixed, ...random];
    expect(texts.map(fnv1a64)).toEqual(python(texts));
  });

  it('joins the frame keys leaf first with \\n', () => {
    const frames = ['a+0x1', 'b+0x2'];
    expect(stackHash(frames)).toBe(python(['a+0x1\nb+0x2'])[0]);
    expect(stackHash(frames)).not.toBe(stackHash(['b+0x2', 'a+0x1']));
    expect(isStackHash(stackHash(frames))).toBe(true);
    for (const bad of ['40', 'AF63DC4C8601EC8C', 'af63dc4c8601ec8', 'af63dc4c8601ec8cc', 'zf63dc4c8601ec8c', '']) expect(isStackHash(bad)).toBe(false);
  });

  it('finds a capture’s stacks by hash, and where the dumps hold them', () => {
    const c = handCapture();
    const d = new ExplorerData(c);
    const { S1, S2, S3 } = handStacks(c);
    const [h1, h2, h3] = python(['a+0x1\nb+0x2', 'c+0x3\nb+0x2', 'a+0x1\nd+0x4\na+0x9\nb+0x2']);
    expect([stackHashOf(d, S1), stackHashOf(d, S2), stackHashOf(d, S3)]).toEqual([h1, h2, h3]);
    expect([stackByHash(d, h1), stackByHash(d, h2), stackByHash(d, h3)]).toEqual([S1, S2, S3]);
    // b+0x2 alone is a node of the prefix tree, not a stack of this capture
    expect(stackByHash(d, python(['b+0x2'])[0])).toBeNull();
    expect(stackByHash(d, 'af63dc4c8601ec8c')).toBeNull();
    // the fixture's dumps: gen 1 {1: S1, 2: S2, 3: S3}, gen 2 {1: S2}
    const slots = dumpSlotsOfStacks(d, [S1, S2, S3]);
    expect(slots.get(S1)).toEqual([{ generation: 1, slot: 1 }]);
    expect(slots.get(S2)).toEqual([
      { generation: 1, slot: 2 },
      { generation: 2, slot: 1 },
    ]);
    expect(slots.get(S3)).toEqual([{ generation: 1, slot: 3 }]);
    // one stack asked alone gets the same, and the others nothing
    expect([...dumpSlotsOfStacks(d, [S2]).entries()]).toEqual([[S2, slots.get(S2)]]);
    // what the worker answers: '' for an index that is no node, null for a foreign hash
    const ex = new Explorer(c);
    expect([ex.stackHash(S2), ex.stackHash(-1), ex.stackHash(1e9)]).toEqual([h2, '', '']);
    expect([ex.stackByHash(h3), ex.stackByHash('0000000000000000')]).toEqual([S3, null]);
  });

  it('names every stack of the sample capture uniquely, and top stacks and the Chrome trace export carry it', () => {
    const d = new ExplorerData(sampleCapture());
    const stacks = new Set<number>();
    for (const s of d.rec.stack) if (s >= 0) stacks.add(s);
    const list = [...stacks];
    const want = python(list.map((s) => d.stacks.framesOf(s).join('\n')));
    expect(list.map((s) => stackHashOf(d, s))).toEqual(want);
    expect(new Set(want).size).toBe(list.length);
    expect(list.map((_, i) => stackByHash(d, want[i]))).toEqual(list);

    const top = topStacks(d, { selection: ALL, filter: '', limit: 20 });
    expect(top.rows.map((r) => r.stackHash)).toEqual(top.rows.map((r) => want[list.indexOf(r.stack)]));
    // a row's slots are the dumps' records of that stack, read here straight from the dump index
    for (const r of top.rows) {
      const slots: string[] = [];
      for (const gd of d.capture.dumps.byGeneration.values()) for (const [slot, x] of gd.slots) if (x.stack === r.stack) slots.push(`${gd.generation}:${slot}`);
      expect(r.slots.map((x) => `${x.generation}:${x.slot}`).sort()).toEqual(slots.sort());
    }

    const chrome = JSON.parse(exportChromeTrace(d, ALL)) as { traceEvents: { args?: { stack?: string[]; stack_hash?: string } }[] };
    const withStack = chrome.traceEvents.filter((e) => e.args?.stack);
    expect(withStack.length).toBeGreaterThan(1000);
    const texts = [...new Set(withStack.map((e) => e.args!.stack!.join('\n')))];
    const byText = new Map(python(texts).map((h, i) => [texts[i], h]));
    expect(withStack.filter((e) => e.args!.stack_hash !== byText.get(e.args!.stack!.join('\n')))).toEqual([]);
  });
});
