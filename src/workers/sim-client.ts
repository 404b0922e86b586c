import * as Comlink from 'comlink';
import type { SimCpuApi, SimTracefsApi } from './sim-api.ts';

/** Starts the simulator's workers: one per simulated CPU, and tracefs users (resets, dumps). */
export function startSimCpuWorker(cpu: number): { api: Comlink.Remote<SimCpuApi>; worker: Worker } {
  const worker = new Worker(new URL('./sim-cpu.worker.ts', import.meta.url), { type: 'module', name: `sim-cpu-${cpu}` });
  return { api: Comlink.wrap<SimCpuApi>(worker), worker };
}

export function startSimTracefsWorker(name: string): { api: Comlink.Remote<SimTracefsApi>; worker: Worker } {
  const worker = new Worker(new URL('./sim-tracefs.worker.ts', import.meta.url), { type: 'module', name: `sim-tracefs-${name}` });
  return { api: Comlink.wrap<SimTracefsApi>(worker), worker };
}
