// The what-if replay (core/whatif/whatif.ts) at scale: a generated capture of N events, each with a
// full stack (the map off), read as the CLI reads it; then, alternating, best of R:
//   B: the replay of every record through the map at bits 10..18 (one mode, v8: 9 replays, plus
//      the map-off ring), from the time-ordered input (whatif-input.ts), as the what-if worker runs it
//   A (the baseline): a plain loop over the same records hashing each one's stack (the map's hash,
//      the least any replay does per record)
// The ratio says what the 9 replays cost in hashes of every record. --smoke checks the figures
// against a plain first-come-first-stored model of the map (no timing).
//
//   npx tsx bench/whatif.ts [--events N] [--runs R] [--json] [--smoke]
//   npx tsx bench/whatif.ts --against REV   (also src/core's whatIfFromInput at REV on the same input, alternating: row whatif-replay-ab)
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { arg, coreAt, flag } from './args.ts';
import type { Row } from './contract.ts';
import { generated } from './generated.ts';
import { readFiles } from '../src/cli/read-files.ts';
import { prepareWhatIf, whatIfColumns, type WhatIfInput } from '../src/core/whatif/whatif-input.ts';
import { whatIfFromInput, WHATIF_BITS } from '../src/core/whatif/whatif.ts';
import { createMapBuffer, MAX_DEPTH } from '../src/core/sim/map-layout.ts';
import { MapInsert } from '../src/core/sim/map-insert.ts';

const SMOKE = flag('--smoke');
const JSON_OUT = flag('--json');
const EVENTS = Number(arg('--events', SMOKE ? '3000' : '200000'));
const RUNS = Number(arg('--runs', SMOKE ? '1' : '5'));
const AGAINST = arg('--against', '');
const log = (s: string) => (JSON_OUT ? process.stderr : process.stdout).write(s + '\n');

/** The baseline: every record's stack hashed, in time order, as the map hashes it. */
function hashLoop(x: WhatIfInput): number {
  const params = { mode: 'v8' as const, bits: 10, cpus: 1, hashSeed: 0x2545f491 };
  const hasher = new MapInsert(createMapBuffer(params), params);
  let acc = 0;
  for (let i = 0; i < x.count; i++) {
    const s = x.stack[i];
    if (s >= 0 && x.depths[s] <= MAX_DEPTH) acc = (acc + hasher.hash(x.words[s], x.depths[s])) | 0;
  }
  return acc;
}

/** Stored and fallbacks of a plain model: first come, first stored while 2^bits elements last. */
function plain(x: WhatIfInput, bits: number): { stored: number; fallbacks: number } {
  const stored = new Set<number>();
  let fallbacks = 0;
  for (let i = 0; i < x.count; i++) {
    const s = x.stack[i];
    if (s < 0 || x.depths[s] > MAX_DEPTH) continue;
    if (stored.has(s) || stored.size < 2 ** bits) stored.add(s);
    else fallbacks++;
  }
  return { stored: stored.size, fallbacks };
}

async function main() {
  const cap = generated(['--events', String(EVENTS), '--full-stacks', ...(SMOKE ? ['--stacks', '1500'] : [])]);
  const trace = cap.files.find((f) => f.endsWith('/trace'))!;
  const t0 = performance.now();
  const { capture } = await readFiles([trace]);
  const x = prepareWhatIf(whatIfColumns(capture));
  log(`${EVENTS} events read and put in time order in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${x.count} items, ${x.words.length} distinct stacks`);
  const records = Array.from(x.stack).filter((s) => s >= 0 && x.depths[s] <= MAX_DEPTH).length;
  if (records !== EVENTS) throw new Error(`expected a full stack with each of the ${EVENTS} events, found ${records}`);

  // A: whatIfFromInput of src/core at REV (the input's shape is the same since whatif-input.ts)
  const aDir = AGAINST ? coreAt(fileURLToPath(new URL('..', import.meta.url)), AGAINST, 'smx-whatif-ab-') : '';
  const aModule = aDir ? (existsSync(`${aDir}/src/core/whatif/whatif.ts`) ? `${aDir}/src/core/whatif/whatif.ts` : `${aDir}/src/core/model/whatif.ts`) : ''; // before the layers, core/model
  const aReplay = aDir ? ((await import(aModule)) as { whatIfFromInput?: typeof whatIfFromInput }).whatIfFromInput : undefined;
  if (aDir && !aReplay) throw new Error(`${AGAINST} has no whatIfFromInput (it predates whatif-input.ts)`);
  let best = { replay: Infinity, hash: Infinity, against: Infinity };
  let result = whatIfFromInput(x, { modes: ['v8'] });
  try {
    for (let r = 0; r < RUNS; r++) {
      let t = performance.now();
      const h = hashLoop(x);
      const hash = performance.now() - t;
      let against = Infinity;
      if (aReplay) {
        t = performance.now();
        const ra = aReplay(x, { modes: ['v8'] });
        against = performance.now() - t;
        if (JSON.stringify(ra.bits) !== JSON.stringify(result.bits)) throw new Error(`${AGAINST}'s figures differ from this tree's`);
      }
      t = performance.now();
      result = whatIfFromInput(x, { modes: ['v8'] });
      const replay = performance.now() - t;
      best = { replay: Math.min(best.replay, replay), hash: Math.min(best.hash, hash), against: Math.min(best.against, against) };
      log(
        `run ${r + 1}: hash loop ${hash.toFixed(1)} ms (${h}), replay x ${WHATIF_BITS.length} bits ${replay.toFixed(0)} ms${aReplay ? `, at ${AGAINST} ${against.toFixed(0)} ms` : ''}`,
      );
    }
  } finally {
    if (aDir) rmSync(aDir, { recursive: true, force: true });
  }
  // the figures, against the plain model (a what-if with wrong figures is no faster for it)
  for (const row of result.bits) {
    const p = plain(x, row.bits);
    if (row.records !== records || row.stored !== p.stored || row.fallbacks !== p.fallbacks)
      throw new Error(
        `bits ${row.bits}: stored ${row.stored}, fallbacks ${row.fallbacks} of ${row.records}; the plain model says ${p.stored}, ${p.fallbacks} of ${records}`,
      );
  }
  const ratio = best.replay / best.hash;
  const rows: Row[] = [
    {
      id: `whatif-replay-${EVENTS >= 1000 ? `${Math.round(EVENTS / 1000)}k` : EVENTS}`,
      what: `what-if replay of ${EVENTS} full-stack records through the map at bits 10..18 (v8, ${x.words.length} distinct stacks), best of ${RUNS}`,
      value: best.replay,
      unit: 'ms',
      baseline: { what: "a plain loop hashing every record's stack once", value: best.hash, unit: 'ms' },
      ratio,
      note: `${(best.replay / WHATIF_BITS.length).toFixed(0)} ms per bits; figures checked against a first-come-first-stored model`,
    },
  ];
  if (aReplay)
    rows.push({
      id: 'whatif-replay-ab',
      what: `the same replay, this tree against ${AGAINST} (alternating, best of ${RUNS})`,
      value: best.replay,
      unit: 'ms',
      baseline: { what: `whatIfFromInput at ${AGAINST}`, value: best.against, unit: 'ms' },
      ratio: best.replay / best.against,
    });
  log(
    `replay ${best.replay.toFixed(0)} ms, hash loop ${best.hash.toFixed(1)} ms: ${ratio.toFixed(1)}x${aReplay ? `; at ${AGAINST} ${best.against.toFixed(0)} ms, B/A ${(best.replay / best.against).toFixed(3)}` : ''}`,
  );
  if (JSON_OUT) process.stdout.write(JSON.stringify({ rows }) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
