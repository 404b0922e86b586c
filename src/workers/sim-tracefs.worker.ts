import * as Comlink from 'comlink';
import { recordClock } from '../core/sim/cpu-loop.ts';
import { decodeBinDump, ESTALE, readBinDump, readTextDump } from '../core/sim/dump-reader.ts';
import { Live } from '../core/sim/live.ts';
import { C } from '../core/sim/map-layout.ts';
import { SharedStackMap } from '../core/sim/shared-map.ts';
import { captureMap, snapshotOf, type MapCopy } from '../core/sim/sim-snapshot.ts';
import type { SimTracefsApi } from './sim-api.ts';

/** A tracefs user: resets, frees and dumps on the shared map, blocking like the kernel's paths. */
let map: SharedStackMap | null = null;
let live: Live | null = null;

const m = () => {
  if (!map) throw new Error('tracefs worker not initialised');
  return map;
};
/** between the passes of a read: the race window, so a reset can land inside it at human speed */
const pace = () => {
  const ms = Atomics.load(m().i32, C.WINDOW_US) / 1000;
  if (ms > 0) Atomics.wait(m().i32, C.DUMMY, 0, ms);
};

/** the run's start (performance.timeOrigin + performance.now(), ms), for the records' clock */
let runT0 = 0;

const api: SimTracefsApi = {
  init(sab, params, liveSab, t0) {
    runT0 = t0;
    live = new Live(liveSab, params.cpus, t0);
    const l = live;
    map = new SharedStackMap(sab, params, {
      liveWindow: true,
      canBlock: true,
      // free-wait carries the files open on the map in its slot field (the log says how many it waits for)
      onEvent: (kind, slot) =>
        l.event(kind, -1, kind === 'free-wait' ? Math.max(0, Atomics.load(map!.i32, C.READERS)) : slot, Atomics.load(map!.i32, C.GENERATION)),
    });
  },
  reset() {
    // copied inside the reset, computed after it: the look adds no bypasses
    let copy: MapCopy | null = null;
    let at = 0;
    // echo 0 > stack_map, parsed as the version's stack_map does ("0" is a reset in every version)
    const outcome = m().write('0\n', {
      beforeClear: () => {
        copy = captureMap(m());
        at = recordClock(runT0);
      },
    }).reset!;
    return { outcome, snapshot: copy ? snapshotOf(copy) : null, at, generation: m().generation };
  },
  readBin() {
    let estale = 0;
    for (let attempt = 0; attempt < 20; attempt++) {
      // the generation the read opened on (the open may have waited for a reset to end)
      let gen = m().generation;
      const bytes = readBinDump(m(), (pass) => (pass === 0 ? (gen = m().generation) : pace()));
      if (bytes === ESTALE) {
        estale++;
        live?.event('estale', -1, -1, gen);
        continue;
      }
      const dump = { ...decodeBinDump(bytes), bytes };
      // v4/v7 bin v1 has no generation; the simulation still knows which one it read
      if (dump.generationsSeen.length === 0) dump.generationsSeen = [gen];
      live?.event('dump', -1, dump.records.length, gen);
      return { dump, estale };
    }
    return { dump: null, estale };
  },
  readText() {
    const dump = readTextDump(m(), 64, (pass) => pass > 0 && pace());
    if (dump.generationsSeen.length > 1) live?.event('text-spliced', -1, dump.records.length, dump.generationsSeen[dump.generationsSeen.length - 1]);
    return dump;
  },
  free() {
    const readers = Math.max(0, Atomics.load(m().i32, C.READERS));
    // echo free > stack_map: only v8 takes the word (elsewhere -EINVAL)
    return { outcome: m().write('free\n', { wait: true }).free ?? 'einval', readers };
  },
};

Comlink.expose(api);
