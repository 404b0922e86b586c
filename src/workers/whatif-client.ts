import * as Comlink from 'comlink';
import { columnBuffers, type WhatIfColumns } from '../core/whatif/whatif-input.ts';
import type { WhatIfOptions, WhatIfResult } from '../core/whatif/whatif.ts';
import type { WhatIfWorkerApi } from './whatif-api.ts';

export const WHATIF_CANCELLED = 'what-if cancelled';

export interface WhatIfRun {
  result: Promise<WhatIfResult>;
  /** ends the worker at once; `result` rejects with WHATIF_CANCELLED */
  cancel(): void;
}

/**
 * Runs one what-if in a worker of its own (whatif.worker.ts): the columns are transferred to it
 * (the caller's copy is detached), progress comes back after each step, and the worker is ended
 * when the answer comes, when it fails, or on `cancel` (a newer question).
 */
export function runWhatIf(columns: WhatIfColumns, opts: WhatIfOptions, onStep: (done: number, total: number) => void): WhatIfRun {
  const worker = new Worker(new URL('./whatif.worker.ts', import.meta.url), { type: 'module', name: 'whatif' });
  const api = Comlink.wrap<WhatIfWorkerApi>(worker);
  let fail: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
    worker.addEventListener('error', (e) => reject(new Error(`the what-if worker failed (${e.message || 'an error it did not catch'})`)));
  });
  const result = Promise.race([api.run(Comlink.transfer(columns, columnBuffers(columns)), opts, Comlink.proxy(onStep)), failed]).finally(() =>
    worker.terminate(),
  );
  return {
    result,
    cancel: () => {
      worker.terminate();
      fail(new Error(WHATIF_CANCELLED));
    },
  };
}
