/**
 * The v7 document's own figures (Documentation/trace/ftrace-stackmap.rst, its Performance
 * section), verbatim, to show beside the model's where the model's are shown (the what-if pane and
 * `whatif`, the stat pane), labelled as the document's. They are the document's measurement on
 * its machine, not this capture's: a capture's figures are compared with them, never replaced.
 */
export const V7_DOC_FIGURES = {
  /** where they come from, in the document's words */
  where: 'the v7 document, Performance: "Typical results on an aarch64 SMP system (function tracer, 2 seconds)"',
  stackRecords: '~3000',
  dedupRate: '84-98% (depends on workload diversity)',
  savings: '~80% for stack data',
  /** the dedup rate's range as numbers, to say whether a capture's falls in it */
  dedupRange: [0.84, 0.98] as const,
} as const;

/** A capture's (or a what-if row's) figures in the document's terms. */
export interface ModelFigures {
  /** stack records counted */
  records: number;
  /** share of stack records that reused a stored stack (NaN when unknown) */
  dedupRate: number;
  /** the stack records' ring-buffer bytes with the map and without it (NaN when unknown) */
  bytesWithMap: number;
  bytesWithoutMap: number;
}

export interface FigureRow {
  id: 'records' | 'dedup' | 'savings';
  what: string;
  /** the document's figure, verbatim */
  doc: string;
  /** the model's, in words */
  model: string;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The ring-buffer savings for stack data: 1 - stack bytes with the map / without it (NaN when unknown). */
export function stackSavings(bytesWithMap: number, bytesWithoutMap: number): number {
  return Number.isFinite(bytesWithoutMap) && bytesWithoutMap > 0 ? 1 - bytesWithMap / bytesWithoutMap : NaN;
}

/** The document's three figures, each beside the model's. */
export function besideV7Doc(m: ModelFigures): FigureRow[] {
  const [lo, hi] = V7_DOC_FIGURES.dedupRange;
  const d = m.dedupRate;
  const where = !Number.isFinite(d) ? '' : d < lo ? ", below the document's range" : d > hi ? ", above the document's range" : ", within the document's range";
  const saved = stackSavings(m.bytesWithMap, m.bytesWithoutMap);
  return [
    { id: 'records', what: 'stack records', doc: V7_DOC_FIGURES.stackRecords, model: m.records.toLocaleString('en-US') },
    { id: 'dedup', what: 'dedup rate', doc: V7_DOC_FIGURES.dedupRate, model: Number.isFinite(d) ? `${pct(d)}${where}` : 'unknown' },
    {
      id: 'savings',
      what: 'ring buffer savings',
      doc: V7_DOC_FIGURES.savings,
      model: Number.isFinite(saved) ? `${pct(saved)} of the stack records' bytes` : 'unknown',
    },
  ];
}
