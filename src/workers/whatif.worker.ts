import * as Comlink from 'comlink';
import { prepareWhatIf } from '../core/whatif/whatif-input.ts';
import { whatIfFromInput } from '../core/whatif/whatif.ts';
import type { WhatIfWorkerApi } from './whatif-api.ts';

// One what-if replay, away from the ingest worker (whatif-api.ts): the columns come in one
// transfer, progress goes out after each step, and the page ends this worker when it is done.
const api: WhatIfWorkerApi = {
  run(columns, opts, onStep) {
    return whatIfFromInput(prepareWhatIf(columns), opts, (done, total) => void onStep(done, total));
  },
};

Comlink.expose(api);
