// ledger.json (sim-ledger.ts): the fixtures' records (version 1, and version 2 with its stacks
// table, event, trueStack and resolvedTo) counted by hand, at every chunk size and renamed
// `unknown` (the kind comes from the bytes; reader-kit.ts); damage is a diagnostic per line, the rest kept.
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createSimLedgerParser, LEDGER_KINDS, LEDGER_OUTCOMES, writeSimLedger } from './sim-ledger.ts';
import { fixture } from '../testing/formats.ts';
import { readEveryWay, readers } from '../testing/reader-kit.ts';

const read = (bytes: Uint8Array, chunk: number, file = 'ledger.json') => {
  const log = new DiagnosticLog(file);
  const p = createSimLedgerParser({ file, diagnostics: log });
  if (chunk <= 0) p.push(bytes);
  else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
  return { r: p.end(), log: log.list() };
};

/** Read every way (reader-kit.ts: chunk sizes, renamed `unknown`, the file's lines, version 2 written back by writeSimLedger). */
const readKit = (bytes: Uint8Array) => {
  const { result: r, diagnostics: log } = readEveryWay('ledger.json', bytes, readers.simLedger);
  return { r, log };
};

describe('the simulator ledger', () => {
  const bytes = fixture('sim_ledger/v1/run.json');
  it("reads the fixture's 4 records (every way: reader-kit.ts)", () => {
    const { r, log } = readKit(bytes);
    expect(log).toEqual([]);
    expect(r.mode).toBe('v7');
    expect(r.count).toBe(4);
    expect(Array.from(r.kind, (k) => LEDGER_KINDS[k])).toEqual(['id', 'full', 'id', 'id']);
    expect(Array.from(r.outcome, (o) => LEDGER_OUTCOMES[o])).toEqual(['correct', 'full', 'wrong', 'correct']);
    expect(Array.from(r.slot)).toEqual([5, -1, 5, 9]);
    expect(Array.from(r.generation)).toEqual([0, -1, 0, 1]);
    expect(Array.from(r.stack)).toEqual([3, 7, 3, 4]);
    expect(Array.from(r.cpu)).toEqual([0, 1, 0, 0]);
    expect(r.ts[3]).toBe(100.000404);
    expect(r.lines).toEqual({ total: 6, used: 6, unused: 0 });
    // version 1 has none of version 2's columns
    expect(r.version).toBe(1);
    expect(r.stacks).toEqual([]);
    for (const c of [r.event, r.trueStack, r.resolvedTo]) expect(Array.from(c)).toEqual([-1, -1, -1, -1]);
  });

  const v2 = fixture('sim_ledger/v2/run.json');
  it("reads version 2's stacks table and its 4 records' event, trueStack and resolvedTo (every way, and written back: reader-kit.ts)", () => {
    const { r, log } = readKit(v2);
    expect(log).toEqual([]);
    expect(r.version).toBe(2);
    expect(r.mode).toBe('v7');
    expect(r.count).toBe(4);
    expect(r.stacks).toEqual([
      ['__kmalloc+0x64', 'kmalloc_trace+0x284'],
      ['kmem_cache_alloc+0x4c', 'vm_area_alloc+0x28', 'mmap_region+0x24'],
      ['kmem_cache_alloc+0x4c', 'vm_area_alloc+0x28', 'mmap_region+0x28'],
    ]);
    expect(Array.from(r.kind, (k) => LEDGER_KINDS[k])).toEqual(['id', 'id', 'full', 'id']);
    expect(Array.from(r.outcome, (o) => LEDGER_OUTCOMES[o])).toEqual(['unresolved', 'correct', 'full', 'wrong']);
    expect(Array.from(r.event)).toEqual([-1, 1, 2, 4]); // null: an orphan
    expect(Array.from(r.trueStack)).toEqual([0, 0, 1, 2]);
    expect(Array.from(r.resolvedTo)).toEqual([-1, 0, 1, 1]);
    expect(Array.from(r.stack)).toEqual([3, 3, 7, 8]);
    expect(r.ts[3]).toBe(100.000303);
    expect(r.lines).toEqual({ total: 10, used: 10, unused: 0 });
  });

  it('version 2: a record naming a stack the table lacks, or without its event, is a diagnostic; a bad stack line keeps its index', () => {
    const text = new TextDecoder().decode(v2).split('\n');
    text[2] = '["one",2]';
    text[6] = text[6].replace('"trueStack":0', '"trueStack":3');
    text[7] = text[7].replace('"event":2,', '');
    const { r, log } = read(new TextEncoder().encode(text.join('\n')), 5);
    expect(log.map((d) => [d.where, d.message])).toEqual([
      ['line 3', 'not a ledger stack (an array of frames)'],
      ['lines 7, 8', 'not a ledger record (event, trueStack or resolvedTo missing, or not an index of the stacks table)'],
    ]);
    expect(r.count).toBe(2);
    expect(r.stacks[1]).toEqual([]);
    expect(Array.from(r.resolvedTo)).toEqual([-1, 1]);
    expect(r.lines).toEqual({ total: 10, used: 7, unused: 3 });
  });

  it("writes what it reads, past its first columns' capacity", () => {
    const stacks = Array.from({ length: 97 }, (_, i) => [`f${i}+0x10`, 'do_syscall_64+0x26c']);
    const recs = Array.from({ length: 3000 }, (_, i) => ({
      cpu: i % 4,
      ts: 100 + i / 1e6,
      kind: 'cookie' as const,
      slot: i,
      generation: i >> 10,
      stack: i % 97,
      event: i === 0 ? null : 2 * i,
      trueStack: i % 97,
      resolvedTo: i % 3 === 0 ? null : (i + 1) % 97,
      outcome: 'detected' as const,
    }));
    const { r, log } = read(writeSimLedger('v8', recs, stacks), 4093);
    expect(log).toEqual([]);
    expect(r.count).toBe(3000);
    expect(r.slot[2999]).toBe(2999);
    expect(r.generation[2999]).toBe(2);
    expect(r.stacks).toEqual(stacks);
    expect([r.event[0], r.event[2999]]).toEqual([-1, 5998]);
    expect([r.trueStack[2999], r.resolvedTo[2999], r.resolvedTo[2997]]).toEqual([2999 % 97, 3000 % 97, -1]);
  });

  it('a damaged line is a diagnostic by line, the others kept; a ledger cut short says so', () => {
    const text = new TextDecoder().decode(bytes).split('\n');
    text[2] = '{"cpu":"one","ts":1,"kind":"full"}';
    text[3] = 'not json at all';
    const cut = text.slice(0, 5).join('\n') + '\n';
    const { r, log } = read(new TextEncoder().encode(cut), 7);
    expect(r.count).toBe(2);
    expect(log.map((d) => [d.where, d.message])).toEqual([
      ['line 3', 'not a ledger record (a field missing or of the wrong type)'],
      ['line 4', 'not a ledger record (not JSON)'],
      ['file', 'the ledger ends without its closing "]}": cut short, the records read are kept'],
    ]);
    expect(r.lines).toEqual({ total: 5, used: 3, unused: 2 });
  });
});
