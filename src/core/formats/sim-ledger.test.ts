// ledger.json (sim-ledger.ts): the fixture's records counted by hand, at every chunk size and
// renamed `unknown` (the kind comes from the bytes); damage is a diagnostic per line, the rest kept.
import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { createSimLedgerParser, LEDGER_KINDS, LEDGER_OUTCOMES, writeSimLedger } from './sim-ledger.ts';
import { sniffKind } from './sniff.ts';
import { CHUNK_SIZES, fixture } from '../testing/formats.ts';

const read = (bytes: Uint8Array, chunk: number, file = 'ledger.json') => {
  const log = new DiagnosticLog(file);
  const p = createSimLedgerParser({ file, diagnostics: log });
  if (chunk <= 0) p.push(bytes);
  else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
  return { r: p.end(), log: log.list() };
};

describe('the simulator ledger', () => {
  const bytes = fixture('sim_ledger/v1/run.json');
  for (const chunk of CHUNK_SIZES)
    for (const name of ['ledger.json', 'unknown'])
      it(`reads the fixture's 4 records (chunks of ${chunk}, named ${name})`, () => {
        expect(sniffKind(bytes)).toBe('sim_ledger');
        const { r, log } = read(bytes, chunk, name);
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
      });

  it("writes what it reads, past its first columns' capacity", () => {
    const recs = Array.from({ length: 3000 }, (_, i) => ({ cpu: i % 4, ts: 100 + i / 1e6, kind: 'cookie' as const, slot: i, generation: i >> 10, stack: i % 97, outcome: 'detected' as const }));
    const { r, log } = read(writeSimLedger('v8', recs), 4093);
    expect(log).toEqual([]);
    expect(r.count).toBe(3000);
    expect(r.slot[2999]).toBe(2999);
    expect(r.generation[2999]).toBe(2);
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
