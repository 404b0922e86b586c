import * as Comlink from 'comlink';
import { Explorer } from '../core/query/explorer.ts';
import { exportSelection } from '../core/export/exports.ts';
import { CancelledError } from '../core/capture/load.ts';
import type { FlameRequest, FlameResult, FlameTree, Selection } from '../core/query/api.ts';
import { flameSvg } from '../core/export/flame-svg.ts';
import { summarize } from '../core/capture/summary.ts';
import { whatIfColumns, type WhatIfColumns } from '../core/whatif/whatif-input.ts';
import { active, captureFiles, dataFor, ex, explore, fieldsOf, filteredOf, groupsFor, loads, setFiltered, viewFor } from './ingest-views.ts';
import { CANCELLED, NO_CAPTURE, TEST_HOOKS, TEST_HOOKS_BUILT, type CompareRequest, type IngestApi, type NamedBlob } from './ingest-api.ts';
import { browserTraceParts } from './trace-part-client.ts';
import { loadFiles } from '../core/capture/load.ts';
import { flame } from '../core/query/flame.ts';
import { differentialFlame, type ComparisonSide } from '../core/query/flame-differential.ts';
import { framesOf, withoutFrames, type NodeFrames } from '../core/query/flame-frames.ts';
import { topStacks } from '../core/query/top-stacks.ts';
import { groupedTopStacks } from '../core/query/top-stacks-grouped.ts';
import { ALL, type FlameWeight } from '../core/query/api.ts';
import { filteredOut } from '../core/query/timeline-rest.ts';
import { diffFolded, diffSide, diffSides, type DiffResult } from '../core/export/diff.ts';
import { EventFilter } from '../core/capture/event-filter.ts';
import { filterLines } from '../core/capture/filter-lines.ts';
import { FilterError } from '../core/capture/event-filter-parse.ts';

/**
 * A large trace's second half on a nested worker (trace-part-client.ts), on two cores or more.
 * Its script is fetched through this thread's tasks, and the load ran on in one task until its
 * half was read, so the halves ran one after the other (1 GiB: 4.2 s, then 4.5 s); load.ts now
 * gives the event loop a turn until the other thread reads. Two cores read 1 GiB in 3.8-3.9 s
 * against 5.8 s on one thread. The page's own thread then shares both cores with two busy ones:
 * alone its frames stay at 16.7 ms (bench/timeline-browser.ts), but beside another browser (the
 * e2e suite's second worker) the bar went from under 8% to 50% between two frames, so the e2e
 * tests cancel at a percent by holding the load there (e2e/load-cancel.spec.ts), not by racing
 * it. With the test hooks, for every trace past 64 KiB: the e2e tests then read through it in a
 * real Chromium.
 */
const parts =
  TEST_HOOKS_BUILT && self.name.includes(TEST_HOOKS)
    ? browserTraceParts(64 << 10)
    : (self.navigator?.hardwareConcurrency ?? 1) >= 2
      ? browserTraceParts()
      : undefined;

/** the what-if's columns of the capture they were made for (one linear pass, then copied to each asker) */
const whatIfCache = new WeakMap<object, WhatIfColumns>();

const treeBuffers = (t: FlameTree): ArrayBuffer[] =>
  [
    t.name,
    t.parent,
    t.depth,
    t.value,
    t.self,
    t.highlight,
    ...(t.hidden ? [t.hidden] : []),
    ...(t.hiddenCount ? [t.hiddenCount] : []),
    ...(t.other ? [t.other] : []),
  ].map((a) => a.buffer as ArrayBuffer);
/** distinct buffers only: transferring one twice throws */
const flameBuffers = (r: FlameResult): ArrayBuffer[] => [...new Set([...treeBuffers(r.tree), ...(r.callers ? treeBuffers(r.callers) : [])])];

/**
 * The last flame answers, whole: the page gets each tree without its nodes' frames (made only
 * when read: core/query/flame-frames.ts lazyFrames) and asks for them after it painted
 * (`flameFrames`), for its tooltip and menu. Kept for a few answers, since the page may still
 * show one while the next is on its way.
 */
const KEPT_FLAMES = 8;
const flames = new Map<number, FlameResult>();
let lastFlameId = 0;

/** `r` for the page: its trees without frames, transferred, and the id its frames are asked by. */
function sendFlame(r: FlameResult): FlameResult {
  const framesId = ++lastFlameId;
  flames.set(framesId, r);
  for (const id of flames.keys()) if (flames.size > KEPT_FLAMES) flames.delete(id);
  const out: FlameResult = { ...r, tree: withoutFrames(r.tree), callers: r.callers && withoutFrames(r.callers), framesId };
  return Comlink.transfer(out, flameBuffers(out));
}

const nodeFramesOf = (t: FlameTree): NodeFrames => framesOf(t as FlameTree & NodeFrames);

/**
 * Held while this worker lives (named after it: each worker the page starts has its own name), so
 * the page learns of its death, whatever the cause, when the lock is granted to it instead.
 */
const lockName = `stackmap-ingest:${self.name}`;
const locks = (self.navigator as Navigator | undefined)?.locks;
const held: Promise<string | null> = locks
  ? new Promise((resolve) => {
      void locks.request(lockName, () => {
        resolve(lockName);
        return new Promise<never>(() => {});
      });
    })
  : Promise.resolve(null);

/** The baseline capture (issue 37): the "before" of every comparison, read from its own files, apart from the loads. */
let baseline: { explorer: Explorer; files: NamedBlob[] } | null = null;

function needBaseline(): Explorer {
  if (!baseline) throw new Error('no baseline capture: open one with Compare with…');
  return baseline.explorer;
}

/** A comparison weighs as the panes do, but a field's weight would need both captures read again: not offered. */
function compareWeight(weight: FlameWeight): FlameWeight {
  if (weight.startsWith('field:')) throw new Error('a comparison weighs by occurrences, ref_count or period, not by a field');
  return weight;
}

/**
 * The two sides of a comparison, one machinery for both sources: the baseline capture (all of it)
 * against the open capture's selection, or two generations of the open capture (the selection's
 * range and CPUs kept, its generation replaced by each side's).
 */
function sidesOf(selection: Selection, generations?: [number | 'none', number | 'none']): { before: ComparisonSide; after: ComparisonSide } {
  const d = ex().data;
  if (generations)
    return { before: { data: d, sel: { ...selection, generation: generations[0] } }, after: { data: d, sel: { ...selection, generation: generations[1] } } };
  return { before: { data: needBaseline().data, sel: ALL }, after: { data: d, sel: selection } };
}

async function comparison(req: CompareRequest): Promise<DiffResult> {
  const weight = compareWeight(req.weight);
  const { before, after } = sidesOf(req.selection, req.generations);
  return diffSides(diffSide(before.data, before.sel, weight, req.granularity), diffSide(after.data, after.sel, weight, req.granularity), {
    normalize: req.normalize,
  });
}

/** The differential: one side's tree drawn, each node with the other side's weight on its path (top-down). */
function differential(req: FlameRequest, widths: 'after' | 'before', generations?: [number | 'none', number | 'none']): FlameResult {
  return differentialFlame(sidesOf(req.selection, generations), { ...req, weight: compareWeight(req.weight) }, widths, generations !== undefined);
}

/** testHoldAt's cell and fraction, until a load takes it */
let hold: { cell: Int32Array; fraction: number } | null = null;

/**
 * The page's progress callback for one load, holding it where testHoldAt asked: the hold is this
 * load's from its start (a later testHoldAt waits for the next load), and a held load reports
 * every slice it reads, so the hold comes at the first report past the fraction, not 50 ms after.
 */
function progressOf(onProgress: Parameters<IngestApi['ingest']>[1]): { onProgress: Parameters<IngestApi['ingest']>[1]; progressEveryMs?: number } {
  const mine = TEST_HOOKS_BUILT ? hold : null;
  if (!mine || !onProgress) return { onProgress };
  hold = null;
  let waiting = true;
  return {
    progressEveryMs: 0,
    onProgress: (p) => {
      onProgress(p);
      if (waiting && p.totalBytes > 0 && p.bytesRead >= mine.fraction * p.totalBytes && p.bytesRead < p.totalBytes) {
        waiting = false;
        Atomics.store(mine.cell, 0, 1);
        while (Atomics.load(mine.cell, 0) === 1) Atomics.wait(mine.cell, 0, 1);
      }
    },
  };
}

const api: IngestApi = {
  async ingest(req, onProgress) {
    try {
      const before = loads.current;
      const r = await loads.load(req, { ...progressOf(onProgress), parts });
      if (r.outcome === 'rejected') return r;
      captureFiles.set(r.built, req.mode === 'add' ? [...((before && captureFiles.get(before)) ?? []), ...req.files] : req.files);
      const { explorer, summary } = r.built;
      return {
        outcome: 'loaded',
        summary,
        overview: explorer.overview(),
        warnings: explorer.warnings(),
        stats: r.capture.stats,
        elapsedMs: r.elapsedMs,
      };
    } catch (e) {
      if (e instanceof CancelledError) throw new Error(CANCELLED);
      throw e;
    }
  },
  cancel: (id) => loads.cancel(id),
  alive: () => held,
  testStall() {
    if (!TEST_HOOKS_BUILT || !self.name.includes(TEST_HOOKS)) throw new Error('test hooks are off in this worker');
    // as a reader caught in an endless loop: nothing else runs in this worker from here on
    const cell = typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : null;
    for (;;) if (cell) Atomics.wait(cell, 0, 0, 1000);
  },
  testHoldAt(cell, fraction) {
    if (!TEST_HOOKS_BUILT || !self.name.includes(TEST_HOOKS)) throw new Error('test hooks are off in this worker');
    hold = { cell, fraction };
  },

  // large typed arrays are fresh per answer, so they are transferred, not copied
  timeline(req) {
    const a = active();
    const r = a.explorer.timeline(req);
    const base = loads.current;
    // filtered, per CPU: what the filter left out, per lane and column, for the timeline to dim
    if (a.filter && base && req.lanes === 'cpu') r.rest = filteredOut(base.explorer.timeline(req), r);
    return Comlink.transfer(r, [
      ...new Set([r.counts.buffer as ArrayBuffer, r.highlight.buffer as ArrayBuffer, ...(r.rest ? [r.rest.buffer as ArrayBuffer] : [])]),
    ]);
  },
  eventNear: (t, lane, lanes, tolerance, selection) => ex().eventNear(t, lane, lanes, tolerance, selection),
  idStoryCount: () => ex().idStoryCount(),
  idStoryAt: (n) => ex().idStoryAt(n),
  idStoryOfEvent: (e) => ex().idStoryOfEvent(e),
  topStacks: async (req) =>
    req.group ? groupedTopStacks(await dataFor(req.weight), req, await groupsFor(req.group)) : topStacks(await dataFor(req.weight), req),
  stackFrames: (stack) => ex().stackFrames(stack),
  stackHash: (stack) => ex().stackHash(stack),
  stackByHash: (hash) => ex().stackByHash(hash),
  replayStacks: (selection, limit) => ex().replayStacks(selection, limit),
  stackOccurrences(stack, selection) {
    const r = ex().stackOccurrences(stack, selection);
    return Comlink.transfer(r, [r.buffer as ArrayBuffer]);
  },
  async flame(req) {
    if (req.compare && req.mode === 'top-down' && !req.group) return sendFlame(differential(req, req.compare.widths, req.compare.generations));
    const view = await viewFor(req.weight);
    const r = flame(view?.data ?? ex().data, req, req.group ? await groupsFor(req.group) : null);
    // what a field's weight could not weigh, for the pane's note
    return sendFlame(view ? { ...r, unweighed: { field: view.field, records: view.unweighed, of: view.records } } : r);
  },
  flameFrames(framesId) {
    const r = flames.get(framesId);
    if (!r) return null;
    // copied, not transferred: the page may ask again (a pane shown twice, React's StrictMode)
    return { tree: nodeFramesOf(r.tree), callers: r.callers ? nodeFramesOf(r.callers) : null };
  },
  selectionSummary: (selection) => ex().selectionSummary(selection),
  generationDiff: (a, b) => ex().generationDiff(a, b),
  exportSelection: async (kind, selection, { group, ...opts }) => {
    if (kind === 'svg' && opts.compare) {
      // the differential as the page draws it
      const r = differential(
        {
          selection,
          mode: 'top-down',
          weight: opts.weight ?? 'occurrences',
          ...(opts.granularity ? { granularity: opts.granularity } : {}),
          focus: null,
          highlightStack: null,
        },
        opts.compare.widths,
        opts.compare.generations,
      );
      return flameSvg(r, { width: opts.width, title: opts.title, mode: 'top-down', diff: opts.compare });
    }
    const grouping = group && (kind === 'folded' || kind === 'speedscope') && !opts.stackcollapse ? await groupsFor(group) : null;
    return exportSelection(await dataFor(opts.weight), kind, selection, grouping ? { ...opts, groups: grouping } : opts);
  },
  numericFields: () => fieldsOf().then((f) => f.numericFields()),
  eventFields: () => fieldsOf().then((f) => f.fields()),
  eventNames: () => {
    const built = loads.current;
    if (!built) throw new Error(NO_CAPTURE);
    return [...built.explorer.data.t.names.strings];
  },
  async applyFilter(text) {
    const base = loads.current;
    if (!base) throw new Error(NO_CAPTURE);
    const t0 = performance.now();
    if (!text.trim()) {
      setFiltered(null);
      return { outcome: 'applied', text, summary: base.summary, overview: base.explorer.overview(), warnings: base.explorer.warnings(), elapsedMs: 0 };
    }
    let filter: EventFilter;
    const lines = filterLines(text);
    try {
      filter = EventFilter.parse(lines);
    } catch (e) {
      if (e instanceof FilterError) return { outcome: 'error', text, line: Math.max(0, lines.indexOf(e.text)), column: e.column, message: e.message };
      throw e;
    }
    const capture = await loadFiles(captureFiles.get(base) ?? [], { filter });
    // a newer load while this one read: it answers about that, not this
    if (loads.current !== base) throw new Error('another capture was opened while the filter was applied');
    const { explorer, summary } = explore(capture);
    setFiltered({ base, text, filter, built: { explorer, summary } });
    return { outcome: 'applied', text, summary, overview: explorer.overview(), warnings: explorer.warnings(), elapsedMs: performance.now() - t0 };
  },
  whatIfColumns() {
    const capture = ex().capture;
    let c = whatIfCache.get(capture);
    if (!c) whatIfCache.set(capture, (c = whatIfColumns(capture)));
    return c;
  },
  async loadBaseline(files) {
    if (files === null) {
      baseline = null;
      return { outcome: 'dropped' };
    }
    const capture = await loadFiles(files);
    const summary = summarize(capture);
    if (summary.events === 0 && summary.cookies === 0 && summary.fullStacks === 0)
      return { outcome: 'rejected', reason: 'nothing in these files could be read as a capture' };
    baseline = { explorer: new Explorer(capture), files };
    return { outcome: 'loaded', summary };
  },
  compare: (req) => comparison(req),
  compareFolded: async (req) => diffFolded(await comparison(req)),
  // the SQL pane's tables: Arrow (apache-arrow) is imported only when the pane first asks
  async tables() {
    const base = loads.current;
    if (!base) throw new Error(NO_CAPTURE);
    // the SQL pane's tables hold what the panes show: the filtered capture's events when a filter is on
    const f = filteredOf(base);
    const built = f ? f.built : base;
    const [{ buildTables }, { captureIdOf, contentDigest }, { tablesToIpc }] = await Promise.all([
      import('../core/tables/build.ts'),
      import('../core/tables/id.ts'),
      import('../core/tables/arrow.ts'),
    ]);
    const files = await Promise.all(
      (captureFiles.get(base) ?? []).map(async (f) => ({
        name: f.name.split('/').pop() ?? f.name,
        size: f.blob.size,
        head: new Uint8Array(await f.blob.slice(0, 4096).arrayBuffer()),
        // every byte, streamed: the same digest the command line computes (core/tables/id.ts)
        digest: await contentDigest(f.blob.stream() as unknown as AsyncIterable<Uint8Array>),
      })),
    );
    // the captures row: the files dropped, by name (a page has no paths), sizes and digests
    const origin = { sources: files.map((f) => ({ path: f.name, size: f.size, digest: f.digest })), exportedBy: 'stackmap-explorer page' };
    // the page keeps no per-event text: for the tables' payload, tgid and args the files are read
    // again with details kept (and the filter, when one is on), and that reading dropped once built
    const detailed = new Explorer(
      await loadFiles(captureFiles.get(base) ?? [], { details: true, ...(filteredOf(base) ? { filter: filteredOf(base)!.filter } : {}) }),
    );
    if (detailed.data.ev.ts.length !== built.explorer.data.ev.ts.length)
      throw new Error('the files read again do not hold the events read first: the tables were not made');
    const t = tablesToIpc(buildTables(detailed, { captureId: captureIdOf(files), origin }));
    return Comlink.transfer(t, [...new Set(t.map((x) => x.ipc.buffer as ArrayBuffer))]);
  },
};

Comlink.expose(api);
