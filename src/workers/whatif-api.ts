import type { WhatIfColumns } from '../core/whatif/whatif-input.ts';
import type { WhatIfOptions, WhatIfResult } from '../core/whatif/whatif.ts';

/**
 * The what-if worker's API (whatif.worker.ts), called through Comlink: one replay per worker. The
 * page starts a worker for each what-if and ends it when the answer comes or a newer question
 * supersedes it, so the ingest worker only hands over the capture's columns and answers the
 * panes' queries meanwhile.
 */
export interface WhatIfWorkerApi {
  /** the what-if table (core/whatif/whatif.ts) over the columns; `onStep(done, total)` after each step */
  run(columns: WhatIfColumns, opts: WhatIfOptions, onStep: (done: number, total: number) => void): WhatIfResult;
}
