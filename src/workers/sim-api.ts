import type { CpuReport, SharedRefs, SimConfig } from '../core/sim/cpu-loop.ts';
import type { MapDump } from '../core/sim/dump-reader.ts';
import type { MapParams } from '../core/sim/map-layout.ts';
import type { FreeOutcome, ResetOutcome } from '../core/sim/shared-map.ts';
import type { GenerationSnapshot } from '../core/sim/sim-snapshot.ts';

/** A simulated CPU (sim-cpu.worker.ts): runs `runCpu` until the host stops it, and returns its report. */
export interface SimCpuApi {
  run(shared: SharedRefs, cpu: number, config: SimConfig, live: SharedArrayBuffer): CpuReport;
}

/**
 * A process using tracefs (sim-tracefs.worker.ts): `echo 0 > stack_map`, `echo free > stack_map`
 * and reads of `stack_map_bin` / `stack_map`, blocking as the kernel's paths do (Atomics.wait is allowed in a
 * worker, not on the page's main thread). Several run at once, so a reset can land inside a read
 * (ESTALE) or inside another reset (EBUSY).
 */
export interface SimTracefsApi {
  init(map: SharedArrayBuffer, params: MapParams, live: SharedArrayBuffer, t0: number): void;
  /** the map's snapshot of the generation that ends (taken with no insert in flight), when 'ok' */
  /** `at`: when the map was drained and about to be cleared, in the records' clock (Simulation.now); the generation then begun */
  reset(): { outcome: ResetOutcome; snapshot: GenerationSnapshot | null; at: number; generation: number };
  /** reads stack_map_bin, reopening after each ESTALE (counted); passes are paced by the race window */
  readBin(): { dump: MapDump | null; estale: number };
  /** reads stack_map (no check: it may splice two generations) */
  readText(): MapDump;
  /**
   * `echo free > stack_map` (v8, options/stackmap off): blocks until every stack_map /
   * stack_map_bin file opened on the map is closed, then releases it. `readers`: the files open
   * when it was asked.
   */
  free(): { outcome: FreeOutcome; readers: number };
}
