import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CpuReport } from './cpu-loop.ts';
import type { NodeWorkerData } from './node-worker.ts';
import type { SimOptions } from './sim-options.ts';
import type { RunResult } from './sim-report.ts';
import { Simulation } from './simulation.ts';

/**
 * Runs a simulation on Node worker_threads: one worker per simulated CPU (node-worker.ts,
 * started through node-worker-boot.mjs so tsx compiles it, or bundled as sim-worker.mjs), resets
 * and dumps from this thread.
 * CPUs: 1 .. max(cores, 4).
 */

export function maxCpus(): number {
  return Math.max(4, availableParallelism());
}

/**
 * From source (tsx, vitest) this module is a .ts file and its workers start through the tsx
 * bootstrap; bundled (npm run build:cli, scripts/build-cli.ts) it is a chunk in dist-cli/ beside
 * sim-worker.mjs, the same node-worker.ts as plain JavaScript, which starts without tsx.
 */
const BUNDLED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
const BOOT = BUNDLED ? new URL('./sim-worker.mjs', import.meta.url) : new URL('./node-worker-boot.mjs', import.meta.url);
const ENTRY = BUNDLED ? BOOT.href : new URL('./node-worker.ts', import.meta.url).href;

export interface RunHooks {
  /** runs on this thread once every CPU is ready, before any records (e.g. options/stackmap turned off) */
  beforeStart?: (sim: Simulation) => void;
  /**
   * runs on this thread while the CPUs record (alongside the resets), e.g. a reader racing them;
   * the CPUs keep recording past their events until it returns (Simulation.hold)
   */
  during?: (sim: Simulation, host: { sleep: (ms: number) => Promise<void>; finished: () => boolean }) => Promise<void>;
}

export async function runNode(opts: Partial<SimOptions>, hooks: RunHooks = {}): Promise<RunResult> {
  const sim = new Simulation(opts);
  if (sim.config.cpus > maxCpus()) throw new RangeError(`cpus must be in [1, ${maxCpus()}]`);
  const workers: Worker[] = [];
  const reports: CpuReport[] = [];
  let failed: Error | null = null;
  let ended = 0;
  const readies: Promise<void>[] = [];
  const dones: Promise<void>[] = [];
  for (let cpu = 0; cpu < sim.config.cpus; cpu++) {
    const data: NodeWorkerData = { entry: ENTRY, shared: sim.shared, cpu, config: sim.config };
    const w = new Worker(BOOT, { workerData: data });
    workers.push(w);
    let ready!: () => void;
    readies.push(new Promise<void>((r) => (ready = r)));
    dones.push(
      new Promise<void>((resolve) => {
        w.on('message', (m: { type: string; report?: CpuReport }) => {
          if (m.type === 'ready') ready();
          else if (m.type === 'done') reports[m.report!.cpu] = m.report!;
        });
        w.on('error', (e) => {
          failed ??= e;
          ready();
          sim.stop();
        });
        w.on('exit', () => {
          ended++;
          ready();
          resolve();
        });
      }),
    );
  }
  try {
    await Promise.all(readies);
    hooks.beforeStart?.(sim);
    if (hooks.during) sim.hold();
    sim.start();
    const sleep = (ms: number) => new Promise<void>((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));
    const finished = () => ended === workers.length || failed !== null;
    await Promise.all([sim.drive(sleep, finished), hooks.during?.(sim, { sleep, finished }).finally(() => sim.release())]);
    await Promise.all(dones);
  } finally {
    sim.stop();
    await Promise.all(workers.map((w) => w.terminate()));
  }
  if (failed) throw failed;
  if (reports.filter(Boolean).length !== sim.config.cpus) throw new Error('a CPU worker ended without a report');
  return sim.finish(reports);
}
