import type { Capture } from '../capture/ingest.ts';
import { prepareWhatIf, whatIfColumns, type WhatIfInput } from './whatif-input.ts';
import { createMapBuffer, ELT_WORDS, MAX_DEPTH, type Mode } from '../sim/map-layout.ts';
import { MapInsert } from '../sim/map-insert.ts';
import { DEFAULT_EVENT_BYTES, REC, RECORD_SIZE } from '../sim/ring.ts';
import { CountRing } from './whatif-ring.ts';
import { fmtBytes } from '../base/units.ts';

/**
 * What-if (issue 12 point 3, DESIGN 5.3): would the stack map help this capture, and at which
 * bits? The capture's full `<stack trace>` records are replayed in time order through the
 * simulator's own insert path (`MapInsert`, single-threaded, one map shared by all the
 * capture's CPUs as the kernel's is) for each bits 10..18, and their events through the
 * simulator's seed ring model (whatif-ring.ts, held to sim/ring.ts `Ring`; the seed's record
 * sizes) with the map on and off.
 *
 * Frame keys become ips as the simulator's replay makes them (`ReplayKernel`): the same frame
 * key is the same ip, so hits, stored stacks and fallbacks are the capture's. The hash seed is
 * a fixed one (the real boot's is unknown): only probe-limit fallbacks depend on it.
 */

export const WHATIF_BITS: readonly number[] = [10, 11, 12, 13, 14, 15, 16, 17, 18];
export const DEFAULT_BUFFER_KB = 1408;
export const DEFAULT_MAX_FALLBACK_SHARE = 0.01;
export const WHATIF_HASH_SEED = 0x2545f491;

export interface WhatIfOptions {
  /** per-CPU ring buffer in KiB (buffer_size_kb counts 1,024 B); null: the capture's own (capture.txt's buffer_size_kb), else the default */
  bufferKb?: number | null;
  /** the modes to replay; default both */
  modes?: readonly ('v7' | 'v8')[];
  /** the recommendation's limit: fallbacks / stack records */
  maxFallbackShare?: number;
  /** the event record's data bytes (the capture does not say; the seeds' assumption) */
  eventBytes?: number;
  hashSeed?: number;
  /**
   * The boot window: this many of the capture's first stack records are taken to come before the
   * map was published (trace_options=stackmap on the command line), so they stay in full with the
   * map on too (the v7 document: "Early-boot stacks recorded before publication are not deduplicated")
   */
  bootRecords?: number;
}

/** The one size v8 as posted has (the cover letter: "Fixed capacity of 16384 stacks"): bits 14. */
export const V8_POSTED_BITS = 14;

export interface WhatIfRow {
  mode: 'v7' | 'v8';
  /**
   * v8 rows only: `posted`, v8 as posted (one row, its fixed 16,384 stacks), or `bin`, v8 with the
   * proposed follow-up (`stack_map_bin` version 2 and the `bits` parameter), a row per bits
   */
  v8Variant?: 'posted' | 'bin';
  bits: number;
  /** capacity: 2^bits elements */
  capacity: number;
  /** stack records replayed (the capture's full stacks up to 64 frames) */
  records: number;
  /** distinct stacks the map stored (elements filled) */
  stored: number;
  /** records that hit or filled an element: written as an id (v7, 12 B) or a cookie (v8, 16 B) */
  successes: number;
  /** records written in full because the pool was empty or the probe limit was reached */
  fallbacks: number;
  /** of the fallbacks: the pool was empty (claiming a key first: a gravestone), or a key met a gravestone, or the probe limit */
  fallbacksPoolEmpty: number;
  fallbacksGravestone: number;
  fallbacksProbeLimit: number;
  /** slots whose key was claimed with no element (v8: the pool ran out mid-insert) */
  gravestones: number;
  /**
   * records that reused a stack already stored (a hit on a filled element): successes less the
   * inserts that stored a stack. Counted by the slot each record got, seen before or not
   */
  reused: number;
  /**
   * reused / records: the share of stack records that reused a stored stack, the v7 document's
   * "Dedup rate" (its Performance section). Not successes / records, which counts each stack's
   * first record, the one that stored it, as well
   */
  dedupRate: number;
  /** ring-buffer bytes of the stack records with the map (ids or cookies, fallbacks in full, deep stacks in full) */
  bytesWithMap: number;
  /** the same records, every stack in full */
  bytesWithoutMap: number;
  /** events a full per-CPU buffer keeps with the map / without (retention.ts's gain), summed over CPUs */
  gain: number;
  /** (event + stack bytes per event) without the map / with it: the gain once a buffer has wrapped */
  steadyGain: number;
  /** element pool + slot table (keys and vals), as the v7 document counts */
  mapBytes: number;
  /** fallbacks / records */
  fallbackShare: number;
  /** stack records before the map was published (WhatIfOptions.bootRecords): in full either way, not replayed */
  boot: number;
}

export interface WhatIfResult {
  /** every row, mode by mode, bits ascending */
  bits: WhatIfRow[];
  /** v8 as posted when v8 was replayed (what the kernel offers: its one size), else v7's */
  recommended: { bits: number | null; mode: 'v7' | 'v8'; v8Variant?: 'posted' | 'bin'; why: string };
  /** per mode (and v8 variant): the recommendation under the same rule; posted v8's `bits` is its fixed 14, or null when even that falls back too often */
  recommendedByMode: { mode: 'v7' | 'v8'; v8Variant?: 'posted' | 'bin'; bits: number | null; why: string }[];
  records: number;
  distinctStacks: number;
  /** full stacks deeper than 64 frames: never reach the map, written in full in both columns */
  deepRecords: number;
  /** stack records that are not full stacks (cookies, user stacks): not replayed */
  otherRecords: number;
  events: number;
  cpus: number;
  bufferKb: number;
  /** where bufferKb came from: asked for (--buffer-kb, the pane's input), the capture's own capture.txt, or the default */
  bufferSource: 'option' | 'capture' | 'default';
  eventBytes: number;
  maxFallbackShare: number;
  /** what the figures assume, in words */
  notes: string[];
}

/** Bytes of one hash table entry as the kernel lays it out on 64-bit: a u32 key and a pointer to its element (tracing_map_entry), 16 with alignment. */
export const TABLE_ENTRY_BYTES = 16;

/** The element pool at `bits`: 2^bits elements of the stack's ips, depth and ref_count. */
export function mapPoolBytes(bits: number): number {
  return 2 ** bits * ELT_WORDS * 4;
}

/**
 * The map's memory at `bits`: the element pool and the 2^(bits+1)-entry hash table. At bits 14
 * 8.625 MiB, the v8 cover letter's "about 8.6 MiB"; the pool alone at bits 18 130 MiB, the v7
 * document's "130-135 MiB" (the table is "additional").
 */
export function mapMemoryBytes(bits: number): number {
  return mapPoolBytes(bits) + 2 ** (bits + 1) * TABLE_ENTRY_BYTES;
}

/** Events a full buffer per CPU keeps with the map off (every stack in full): the same for every bits and mode. */
function keptWithoutMap(x: WhatIfInput, ringBytes: number, eventBytes: number): number {
  const off = x.cpus.map(() => new CountRing(ringBytes));
  const { cpuIndex, event, stack, depths } = x;
  for (let i = 0; i < x.count; i++) {
    const r = off[cpuIndex[i]];
    if (event[i]) r.reserve(REC.EVENT, eventBytes);
    if (stack[i] >= 0) r.reserve(REC.FULL, RECORD_SIZE.full(depths[stack[i]]));
  }
  return off.reduce((s, r) => s + r.eventsIn, 0);
}

function replay(
  mode: 'v7' | 'v8',
  bits: number,
  x: WhatIfInput,
  o: Required<Pick<WhatIfOptions, 'eventBytes' | 'hashSeed' | 'bootRecords'>> & { ringBytes: number; hashes: Uint32Array; keptOff: number },
): Omit<WhatIfRow, 'fallbackShare' | 'dedupRate'> {
  const params = { mode: mode as Mode, bits, cpus: 1, hashSeed: o.hashSeed };
  const map = new MapInsert(createMapBuffer(params), params);
  const on = x.cpus.map(() => new CountRing(o.ringBytes));
  const { cpuIndex, event, stack, depths, words } = x;
  const id = mode === 'v8' ? RECORD_SIZE.cookie : RECORD_SIZE.id;
  const idKind = mode === 'v8' ? REC.COOKIE : REC.ID;
  let records = 0;
  let successes = 0;
  let fallbacks = 0;
  let withMap = 0;
  let without = 0;
  let events = 0;
  let boot = 0;
  let reused = 0;
  /** the slots a record got so far: a record whose slot was seen reused a stored stack */
  let seen = new Uint8Array(2 ** (bits + 1));
  for (let i = 0; i < x.count; i++) {
    const c = cpuIndex[i];
    if (event[i]) {
      events++;
      on[c].reserve(REC.EVENT, o.eventBytes);
    }
    const st = stack[i];
    if (st < 0) continue;
    const nr = depths[st];
    const full = RECORD_SIZE.full(nr);
    without += full;
    if (boot < o.bootRecords) {
      // before publication: the regular full-stack path, the map not asked
      boot++;
      withMap += full;
      on[c].reserve(REC.FULL, full);
      continue;
    }
    if (nr > MAX_DEPTH) {
      withMap += full; // never reaches the map (INSERT_DEEP)
      on[c].reserve(REC.FULL, full);
      continue;
    }
    records++;
    // the stack's hash under this seed, computed once per distinct stack (the kernel hashes every stack; the result is the same)
    const slot = map.insertHashed(0, words[st], nr, o.hashes[st]);
    if (slot >= 0) {
      successes++;
      if (slot >= seen.length) {
        const grown = new Uint8Array(Math.max(slot + 1, 2 * seen.length));
        grown.set(seen);
        seen = grown;
      }
      if (seen[slot]) reused++;
      else seen[slot] = 1;
      withMap += id;
      on[c].reserve(idKind, id);
    } else {
      fallbacks++;
      withMap += full;
      on[c].reserve(REC.FULL, full);
    }
  }
  const counts = map.counters();
  const keptOn = on.reduce((s, r) => s + r.eventsIn, 0);
  const keptOff = o.keptOff;
  const perEvOn = events ? (events * o.eventBytes + withMap) / events : 0;
  const perEvOff = events ? (events * o.eventBytes + without) / events : 0;
  return {
    mode,
    bits,
    capacity: 2 ** bits,
    records,
    boot,
    stored: map.entries,
    successes,
    reused,
    fallbacks,
    fallbacksPoolEmpty: counts.fallbacksPoolEmpty,
    fallbacksGravestone: counts.fallbacksGravestone,
    fallbacksProbeLimit: counts.fallbacksProbeLimit,
    gravestones: map.gravestones(),
    bytesWithMap: withMap,
    bytesWithoutMap: without,
    gain: keptOff ? keptOn / keptOff : 1,
    steadyGain: perEvOn ? perEvOff / perEvOn : 1,
    mapBytes: mapMemoryBytes(bits),
  };
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** The smallest bits whose fallbacks stay at or below the share, with the reasoning in words. */
export function recommend(
  rows: readonly WhatIfRow[],
  maxShare: number,
  distinct: number,
  buffer = 'the buffer per CPU',
  label: string = rows[0]?.mode ?? '',
): { bits: number | null; why: string } {
  if (rows.length === 0) return { bits: null, why: 'no rows' };
  const mode = label;
  const records = rows[0].records;
  if (records === 0) return { bits: null, why: 'the capture has no full stack records of 64 frames or fewer: there is nothing for the map to store' };
  const ok = rows.find((r) => r.fallbackShare <= maxShare);
  if (!ok) {
    const last = rows[rows.length - 1];
    return {
      bits: null,
      why: `${mode}: even at bits ${last.bits} (${last.capacity} elements, ${mib(last.mapBytes)}) ${pct(last.fallbackShare)} of the ${records} stack records fall back to full stacks, above the ${pct(maxShare)} allowed`,
    };
  }
  const below = rows.filter((r) => r.bits < ok.bits).pop();
  const why =
    `${mode}: bits ${ok.bits} (${ok.capacity} elements, ${mib(ok.mapBytes)} of element pool and table) stores ${ok.stored} stacks` +
    ` with ${ok.fallbacks} fallbacks (${pct(ok.fallbackShare)} of ${records} stack records, at most ${pct(maxShare)} allowed)` +
    (below ? `; bits ${below.bits} falls back on ${pct(below.fallbackShare)}` : '; it is the smallest size the model has') +
    `. The workload has ${distinct} distinct stacks; the map cuts the stack records from ${fmtBytes(ok.bytesWithoutMap)} to ${fmtBytes(ok.bytesWithMap)}` +
    ` (${(ok.bytesWithoutMap / Math.max(1, ok.bytesWithMap)).toFixed(2)}x) and keeps ${ok.steadyGain.toFixed(2)}x the events per byte of buffer once it has wrapped` +
    (ok.gain > 1.0005
      ? ` (${ok.gain.toFixed(2)}x more events retained in ${buffer})`
      : ` (with ${buffer}, this capture fits the buffer either way, so nothing more is retained in it)`);
  return { bits: ok.bits, why };
}

/** Posted v8's verdict: its one size fits (fallbacks within the share) or not; there is no bits to choose. */
function postedVerdict(r: WhatIfRow, maxShare: number, distinct: number, buffer: string): { bits: number | null; why: string } {
  if (r.records === 0) return { bits: null, why: 'the capture has no full stack records of 64 frames or fewer: there is nothing for the map to store' };
  const fits = r.fallbackShare <= maxShare;
  const why =
    `v8 as posted: a fixed ${r.capacity} stacks (${mib(r.mapBytes)} of element pool and table; no bits parameter) stores ${r.stored} of the workload's ${distinct} distinct stacks` +
    ` with ${r.fallbacks} fallbacks (${pct(r.fallbackShare)} of ${r.records} stack records, ${fits ? 'within' : 'above'} the ${pct(maxShare)} allowed)` +
    `; it cuts the stack records from ${fmtBytes(r.bytesWithoutMap)} to ${fmtBytes(r.bytesWithMap)} and keeps ${r.steadyGain.toFixed(2)}x the events per byte of buffer once it has wrapped` +
    (r.gain > 1.0005 ? ` (${r.gain.toFixed(2)}x more events retained in ${buffer})` : ` (with ${buffer}, this capture fits the buffer either way)`);
  return { bits: fits ? r.bits : null, why };
}

/** `whatIfFromInput` over the capture's own columns, in this thread (the CLI, tests). */
export function whatIf(capture: Capture, opts: WhatIfOptions = {}): WhatIfResult {
  return whatIfFromInput(prepareWhatIf(whatIfColumns(capture)), opts);
}

/** The steps `whatIfFromInput` reports progress in: the map-off ring, then one replay per mode and bits. */
export const whatIfSteps = (modes: number): number => 1 + modes * WHATIF_BITS.length;

/**
 * The what-if table for a capture's items in time order (whatif-input.ts). `onStep(done, total)`
 * is told after each step (the map-off ring, each mode and bits' replay).
 */
export function whatIfFromInput(x: WhatIfInput, opts: WhatIfOptions = {}, onStep?: (done: number, total: number) => void): WhatIfResult {
  const bufferSource: WhatIfResult['bufferSource'] = opts.bufferKb != null ? 'option' : x.captureBufferKb != null ? 'capture' : 'default';
  const bufferKb = opts.bufferKb ?? x.captureBufferKb ?? DEFAULT_BUFFER_KB;
  if (!Number.isInteger(bufferKb) || bufferKb < 1 || bufferKb > 1 << 20) throw new RangeError(`buffer size must be a whole number of KiB in [1, ${1 << 20}]`);
  const maxFallbackShare = opts.maxFallbackShare ?? DEFAULT_MAX_FALLBACK_SHARE;
  if (!(maxFallbackShare >= 0 && maxFallbackShare <= 1)) throw new RangeError('max fallback share must be in [0, 1]');
  const modes = opts.modes ?? ['v7', 'v8'];
  const eventBytes = opts.eventBytes ?? DEFAULT_EVENT_BYTES;
  const hashSeed = opts.hashSeed ?? WHATIF_HASH_SEED;
  const bootRecords = opts.bootRecords ?? 0;
  if (!(Number.isInteger(bootRecords) && bootRecords >= 0)) throw new RangeError('boot records must be a whole number >= 0');
  const total = whatIfSteps(modes.length);
  /** the buffer the gain is for, in the recommendation's words */
  const bufferWords = `${bufferKb} KiB per CPU, ${bufferSource === 'capture' ? 'the size this capture recorded' : bufferSource === 'default' ? 'the default size' : 'the size asked for'}`;
  let done = 0;
  const ringBytes = bufferKb * 1024;
  const keptOff = keptWithoutMap(x, ringBytes, eventBytes);
  onStep?.(++done, total);
  const hasher = new MapInsert(createMapBuffer({ mode: 'v8', bits: 10, cpus: 1, hashSeed }), { mode: 'v8', bits: 10, cpus: 1, hashSeed });
  const hashes = Uint32Array.from(x.words, (w, i) => (x.depths[i] <= MAX_DEPTH ? hasher.hash(w, x.depths[i]) : 0));
  const rows: WhatIfRow[] = [];
  const byMode: WhatIfResult['recommendedByMode'] = [];
  for (const mode of modes) {
    const mine: WhatIfRow[] = [];
    for (const bits of WHATIF_BITS) {
      const r = replay(mode, bits, x, { eventBytes, hashSeed, bootRecords, ringBytes, hashes, keptOff });
      mine.push({
        ...r,
        ...(mode === 'v8' ? { v8Variant: 'bin' as const } : {}),
        dedupRate: r.records ? r.reused / r.records : 0,
        fallbackShare: r.records ? r.fallbacks / r.records : 0,
      });
      onStep?.(++done, total);
    }
    if (mode === 'v8') {
      // v8 as posted: one size, no parameter; its row is the replay at that size
      const posted: WhatIfRow = { ...mine.find((r) => r.bits === V8_POSTED_BITS)!, v8Variant: 'posted' };
      rows.push(posted, ...mine);
      byMode.push({ mode, v8Variant: 'posted', ...postedVerdict(posted, maxFallbackShare, x.words.length, bufferWords) });
      byMode.push({
        mode,
        v8Variant: 'bin',
        ...recommend(mine, maxFallbackShare, x.words.length, bufferWords, 'v8 with the proposed follow-up (stack_map_bin v2 and the bits parameter)'),
      });
    } else {
      rows.push(...mine);
      byMode.push({ mode, ...recommend(mine, maxFallbackShare, x.words.length, bufferWords) });
    }
  }
  // the chosen one: v8 as posted when replayed (it detects stale cookies, and has no size to choose), else the only one
  const main = byMode.find((m) => m.mode === 'v8' && m.v8Variant === 'posted') ?? byMode[0];
  let deep = 0;
  let events = 0;
  for (let i = 0; i < x.count; i++) {
    if (x.event[i]) events++;
    if (x.stack[i] >= 0 && x.depths[x.stack[i]] > MAX_DEPTH) deep++;
  }
  const bufferWhy =
    bufferSource === 'option'
      ? 'as asked'
      : bufferSource === 'capture'
        ? `as the capture recorded it: buffer_size_kb in ${x.captureBufferFile}`
        : 'the default: the capture does not record buffer_size_kb';
  return {
    bits: rows,
    recommended: { bits: main.bits, mode: main.mode, ...(main.v8Variant ? { v8Variant: main.v8Variant } : {}), why: main.why },
    recommendedByMode: byMode,
    // every full stack record up to 64 frames: those replayed and those of the boot window
    records: (rows[0]?.records ?? 0) + (rows[0]?.boot ?? 0),
    distinctStacks: x.words.length,
    deepRecords: deep,
    otherRecords: x.other,
    events,
    cpus: x.cpus.length,
    bufferKb,
    bufferSource,
    eventBytes,
    maxFallbackShare,
    notes: [
      `buffer ${bufferKb} KiB per CPU (${bufferWhy})`,
      `record sizes as the seeds count them: event ${eventBytes} B (assumed), full stack 12 + 8 x depth B, v7 id 12 B, v8 cookie 16 B; no ring-buffer headers`,
      'one map shared by every CPU, replayed single-threaded in time order: no races, so no duplicates or in-flight fallbacks',
      `hash seed 0x${hashSeed.toString(16)} (a boot's own seed changes only probe-limit fallbacks)`,
      ...(bootRecords > 0
        ? [`the first ${bootRecords} stack records taken as before the map was published (the boot window): in full with the map on too`]
        : []),
    ],
  };
}
