import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../testing/real-traces-dir.ts';
import { besideV7Doc, stackSavings, V7_DOC_FIGURES } from './v7-doc-figures.ts';

// The v7 document's figures, shown beside the model's (issue 36). The seed itself, where this
// checkout has it (../shared/seeds/, as the project was created from it), holds each verbatim.
const SEED = `${REPO_ROOT}../shared/seeds/ftrace-stackmap-v7-doc.txt`;

describe("the v7 document's figures", () => {
  it.skipIf(!existsSync(SEED))("are the seed's words, verbatim", () => {
    const doc = readFileSync(SEED, 'utf8');
    expect(doc).toContain(`Stack records: ${V7_DOC_FIGURES.stackRecords}`);
    expect(doc).toContain(`Dedup rate: ${V7_DOC_FIGURES.dedupRate}`);
    expect(doc).toContain(`Ring buffer savings: ${V7_DOC_FIGURES.savings}`);
    expect(doc).toContain('Typical results on an aarch64 SMP system (function tracer, 2 seconds)');
  });

  it('the same words here as the seed gives them (a checkout without the seed checks this copy)', () => {
    expect([V7_DOC_FIGURES.stackRecords, V7_DOC_FIGURES.dedupRate, V7_DOC_FIGURES.savings]).toEqual([
      '~3000',
      '84-98% (depends on workload diversity)',
      '~80% for stack data',
    ]);
    expect(V7_DOC_FIGURES.dedupRange).toEqual([0.84, 0.98]);
  });

  it("beside a model's: records, dedup rate within or outside 84-98%, and the savings 1 - with / without", () => {
    // 40 records, 35 reused; stack bytes 640 with the map, 2,080 without: counted by hand
    const rows = besideV7Doc({ records: 4000, dedupRate: 35 / 40, bytesWithMap: 640, bytesWithoutMap: 2080 });
    expect(rows.map((r) => [r.what, r.doc, r.model])).toEqual([
      ['stack records', '~3000', '4,000'],
      ['dedup rate', '84-98% (depends on workload diversity)', "87.5%, within the document's range"],
      ['ring buffer savings', '~80% for stack data', "69.2% of the stack records' bytes"],
    ]);
    expect(besideV7Doc({ records: 1, dedupRate: 0.5, bytesWithMap: 1, bytesWithoutMap: NaN }).map((r) => r.model)).toEqual([
      '1',
      "50.0%, below the document's range",
      'unknown',
    ]);
    expect(besideV7Doc({ records: 1, dedupRate: 0.99, bytesWithMap: 1, bytesWithoutMap: 2 })[1].model).toBe("99.0%, above the document's range");
    expect(stackSavings(20, 100)).toBeCloseTo(0.8, 12);
  });
});
