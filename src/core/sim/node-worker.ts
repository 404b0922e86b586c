import { parentPort, workerData } from 'node:worker_threads';
import { runCpu, type SharedRefs, type SimConfig } from './cpu-loop.ts';

/** A worker_threads CPU: runs the shared per-CPU loop and posts its report. Started by run-node.ts. */
export interface NodeWorkerData {
  entry: string;
  shared: SharedRefs;
  cpu: number;
  config: SimConfig;
}

const data = workerData as NodeWorkerData;
parentPort!.postMessage({ type: 'ready', cpu: data.cpu });
const report = runCpu(data.shared, data.cpu, data.config);
parentPort!.postMessage({ type: 'done', report });
