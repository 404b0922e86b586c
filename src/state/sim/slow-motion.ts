import { create } from 'zustand';
import { stackKey } from '../../core/sim/ledger.ts';
import type { MapView } from '../../core/sim/map-view.ts';
import { SLOW, slowMotionOptions, SlowMotionScript, type Beat } from '../../core/sim/slow-motion.ts';
import { parkCpus, serial, simSession, sleep, startLedgerTimer, stopLedgerTimer, type SimSession } from './sim-session.ts';
import { useSimStore } from './sim-store.ts';

/**
 * Slow motion in the page (issue 36): a live run of core/sim/slow-motion.ts's workload on the
 * simulator's workers, at one event a second per CPU, with this thread as the reader. Every
 * TICK_MS it takes the records the CPUs wrote (their live lanes) and looks at the map; once each
 * of the phase's stacks has an id it resets (`echo 0 > stack_map`, the CPUs parked for the
 * moment it takes, so the beats before and after it are exact); then the old ids are read back
 * as their slots are refilled. A round ends when every old id has been read back, and the next
 * begins after a breath. Pause parks the CPUs; Step lets them record one more event (or does the
 * reset that is due) and parks them again. Times are ms since the run started, the event log's clock.
 */

const TICK_MS = 100;
/** ms between a round's last read-back and the next reset */
const BREATH_MS = 2500;

export type SlowStatus = 'idle' | 'starting' | 'running' | 'paused' | 'stepping' | 'ended';

export interface SlowState {
  mode: 'v7' | 'v8' | null;
  status: SlowStatus;
  beats: Beat[];
  /** bumps with every beat or look, so panes re-read the map */
  tick: number;
  start(mode: 'v7' | 'v8'): Promise<void>;
  pause(): Promise<void>;
  resume(): void;
  step(): Promise<void>;
}

let script: SlowMotionScript | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
/** records already taken from each CPU's lane */
let taken: number[] = [];
let release: (() => void) | null = null;
let roundEndedMs = -1;
let busy = false;

const now = (s: SimSession) => Math.round(performance.timeOrigin + performance.now() - s.t0);

/** The population index of the stack a published slot holds. */
function stackOfFor(s: SimSession): (view: MapView, slot: number) => number {
  const index = new Map(s.sim.stackKeys.map((k, i) => [k, i]));
  return (view, slot) => index.get(stackKey(view.elementIps(view.published(slot)))) ?? -1;
}

/** The records each CPU wrote since the last look (its lane holds the last 12: at one a second, none is missed). */
function drain(s: SimSession): void {
  const ms = now(s);
  for (let cpu = 0; cpu < s.sim.config.cpus; cpu++) {
    const lane = s.live.laneView(cpu);
    const fresh = Math.min(lane.count - taken[cpu], lane.recent.length);
    for (let j = fresh - 1; j >= 0; j--) script!.write({ cpu, ...lane.recent[j], ms });
    taken[cpu] = lane.count;
  }
}

export const useSlowMotion = create<SlowState>((set, get) => {
  const publish = () => set({ beats: [...script!.beats], tick: get().tick + 1 });

  /** The reset, with the CPUs parked around it: the ids drained before are the stale ones. */
  async function resetNow(s: SimSession, wasParked: boolean): Promise<void> {
    await serial(async () => {
      const free = wasParked ? null : await parkCpus(s);
      try {
        drain(s);
        await useSimStore.getState().reset();
        script!.reset(now(s), s.sim.map.generation);
      } finally {
        free?.();
      }
    });
  }

  /** One look: new records, the reset when it is due (at once when `step`), the read-backs. `parked`: the CPUs are held by Pause. */
  async function look(parked: boolean, step = false): Promise<void> {
    const s = simSession();
    if (!s || !script || busy) return;
    if (useSimStore.getState().status !== 'running') {
      stopTimer();
      set({ status: 'ended' });
      return;
    }
    busy = true;
    try {
      drain(s);
      if (script.roundOver && roundEndedMs < 0) roundEndedMs = now(s);
      const due = script.phaseWritten && (script.resets === 0 || (script.roundOver && (step || now(s) - roundEndedMs >= BREATH_MS)));
      if (due && (step || !parked)) {
        await resetNow(s, parked);
        roundEndedMs = -1;
      }
      script.look(s.sim.map, now(s));
      publish();
    } finally {
      busy = false;
    }
  }

  function stopTimer() {
    if (timer) clearInterval(timer);
    timer = null;
  }

  return {
    mode: null,
    status: 'idle',
    beats: [],
    tick: 0,

    async start(mode) {
      const sim = useSimStore.getState();
      if (sim.status === 'running' || sim.status === 'starting') await sim.stop();
      stopTimer();
      release = null;
      set({ mode, status: 'starting', beats: [] });
      sim.set({ mode });
      await useSimStore.getState().start({ options: slowMotionOptions(mode), paceUs: Math.round(1e6 / SLOW.eventsPerSecond) });
      const s = simSession();
      if (!s || useSimStore.getState().status !== 'running') {
        set({ status: 'idle' });
        return;
      }
      script = new SlowMotionScript(mode, stackOfFor(s));
      taken = Array(s.sim.config.cpus).fill(0);
      roundEndedMs = -1;
      set({ status: 'running' });
      timer = setInterval(() => void look(false), TICK_MS);
    },

    // the ledger's look parks and releases the CPUs each second: not while they are held here
    async pause() {
      const s = simSession();
      if (!s || get().status !== 'running') return;
      stopTimer();
      while (busy) await sleep(5);
      stopLedgerTimer();
      release = await serial(() => parkCpus(s));
      await look(true);
      set({ status: 'paused' });
    },

    resume() {
      if (get().status !== 'paused') return;
      release?.();
      release = null;
      startLedgerTimer(() => void useSimStore.getState().refreshLedger());
      set({ status: 'running' });
      timer = setInterval(() => void look(false), TICK_MS);
    },

    async step() {
      const s = simSession();
      if (!s || !script || get().status !== 'paused') return;
      set({ status: 'stepping' });
      try {
        // a reset that is due is the next step; otherwise one more record, from whichever CPU writes first
        if (!(script.phaseWritten && (script.resets === 0 || script.roundOver))) {
          const before = (c: number) => s.live.laneView(c).count;
          const counts = Array.from({ length: s.sim.config.cpus }, (_, c) => before(c));
          release?.();
          release = null;
          while (useSimStore.getState().status === 'running' && counts.every((n, c) => before(c) === n)) await sleep(10);
          release = await serial(() => parkCpus(s));
        }
        await look(true, true);
      } finally {
        set({ status: useSimStore.getState().status === 'running' ? 'paused' : 'ended' });
      }
    },
  };
});

// a run stopped or replaced from the pane ends the slow motion's looks
useSimStore.subscribe((st, prev) => {
  if (prev.status === 'running' && st.status !== 'running' && timer) {
    clearInterval(timer);
    timer = null;
    useSlowMotion.setState({ status: 'ended' });
  }
});
