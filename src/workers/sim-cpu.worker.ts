import * as Comlink from 'comlink';
import { runCpu } from '../core/sim/cpu-loop.ts';
import { LANE_STATE, Live } from '../core/sim/live.ts';
import { C } from '../core/sim/map-layout.ts';
import type { SimCpuApi } from './sim-api.ts';

/** One simulated CPU: `runCpu` on the shared buffers, its notable steps posted to the live buffer. */
const api: SimCpuApi = {
  run(shared, cpu, config, liveSab) {
    const live = new Live(liveSab, config.cpus, config.t0);
    const ctl = new Int32Array(shared.map);
    const gen = () => Atomics.load(ctl, C.GENERATION);
    live.setState(cpu, LANE_STATE.RECORDING, -1, gen());
    /** the slot this CPU's own insert claimed last (where a nested insert came in) */
    let claimed = -1;
    const report = runCpu(shared, cpu, config, {
      map: {
        liveWindow: true,
        onEvent(kind, slot) {
          if (kind === 'claim') claimed = slot;
          if (kind === 'claim') live.setState(cpu, LANE_STATE.CLAIMED, slot, gen());
          else if (kind === 'nested') live.setState(cpu, LANE_STATE.NESTED, claimed, gen());
          else if (kind === 'bypass') live.setState(cpu, LANE_STATE.BYPASS, -1, gen());
          live.event(kind, cpu, slot, gen());
        },
      },
      onRecord(type, slot, generation, stack) {
        live.record(cpu, type, slot, generation, stack);
        live.setState(cpu, LANE_STATE.RECORDING, -1, gen());
      },
    });
    live.setState(cpu, LANE_STATE.STOPPED, -1, gen());
    return report;
  },
};

Comlink.expose(api);
