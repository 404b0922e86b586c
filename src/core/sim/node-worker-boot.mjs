// Node worker_threads entry for TypeScript workers under tsx 4 on Node 20: `execArgv:
// ['--import', 'tsx']` does not reach a worker's own entry module there, so this plain-JS
// bootstrap registers tsx's ESM loader in the worker and then imports the .ts entry named in
// workerData.entry (works under `tsx` and under vitest 4 alike).
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
