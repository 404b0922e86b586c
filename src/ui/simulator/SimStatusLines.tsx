import { C } from '../../core/sim/map-layout.ts';
import type { SimReport } from '../../core/sim/sim-report.ts';
import type { SimSession } from '../../state/sim/sim-session.ts';
import { fmtDuration, fmtInt } from '../common/format.ts';

// The lines under the simulator's controls: the map's lifecycle state and the finished run's report.

/** Fewer inserts than this and the median says little: not shown as a measurement. */
const MIN_TIMED_INSERTS = 1000;

const plural = (n: number, word: string) => `${fmtInt(n)} ${word}${n === 1 ? '' : 's'}`;

/** options/stackmap, whether the map is allocated, and the stack_map files open on it (v8's free waits for them), read live. */
export function MapLifecycle({ session, freeing }: { session: SimSession; freeing: boolean }) {
  const m = session.sim.map;
  const v8 = session.sim.config.mode === 'v8';
  const on = m.optionOn;
  const allocated = m.allocated;
  const readers = Math.max(0, Atomics.load(m.i32, C.READERS));
  const frees = Atomics.load(m.i32, C.FREES);
  const files = (n: number) => `${fmtInt(n)} stack_map file${n === 1 ? '' : 's'}`;
  return (
    <p
      className={`sim-lifecycle${allocated ? '' : ' freed'}${on ? '' : ' off'}`}
      data-testid="sim-lifecycle"
      data-option={on ? 'on' : 'off'}
      data-allocated={allocated ? '1' : '0'}
      data-readers={readers}
      data-frees={frees}
    >
      <span>
        options/stackmap <b data-testid="sim-lifecycle-option">{on ? 'on' : 'off'}</b>
        {!on && (allocated ? ': every stack in full, uncounted; the map is kept, so the buffer still resolves' : ': every stack in full, uncounted')}
      </span>
      <span>
        map <b data-testid="sim-lifecycle-map">{allocated ? 'allocated' : 'freed'}</b>
        {allocated
          ? `: ${fmtInt(m.capacity)} elements${v8 ? '' : ' (only v8 can free it)'}`
          : ': stack_map and stack_map_stat read “stackmap not initialized”; options/stackmap on allocates a new one'}
      </span>
      <span title="stack_map and stack_map_bin files open on the map (v8's free waits until they are closed)">
        open: <b data-testid="sim-lifecycle-readers">{files(readers)}</b>
      </span>
      {v8 && frees > 0 && (
        <span>
          freed <b>{fmtInt(frees)}</b>×
        </span>
      )}
      {freeing && (
        <span className="chip sim-freeing" data-testid="sim-freeing">
          free: {readers > 0 ? `waiting for ${files(readers)} to close` : 'releasing the map'}
        </span>
      )}
    </p>
  );
}

/** The finished run in one line, in the mode's words; ns per insert only when it was measured. */
export function ReportLine({ report: r, windowUs }: { report: SimReport; windowUs: number }) {
  const v8 = r.mode === 'v8';
  const inserts = r.workers.reduce((n, w) => n + w.inserts, 0);
  const measured = r.nsPerInsert > 0 && inserts >= MIN_TIMED_INSERTS;
  const timing = measured
    ? `${fmtDuration(r.nsPerInsert / 1e9)} per insert (median${windowUs > 0 ? ', race windows included' : ''}; the kernel's algorithm in JavaScript, its hits in WebAssembly: the kernel's own insert is about 50 ns, v7 document)`
    : inserts < MIN_TIMED_INSERTS
      ? `ns per insert not measured (${fmtInt(inserts)} inserts timed, too few)`
      : 'ns per insert not measured (an insert is below what the page’s timer resolves)';
  const ratio = r.retention.bytesPerEventOff / Math.max(1, r.retention.bytesPerEventOn);
  return (
    <p className="quiet" data-testid="sim-report" data-ns-measured={measured ? '1' : '0'}>
      {r.mode}: {fmtInt(r.events)} events on {r.cpus} CPUs in {(r.elapsedMs / 1000).toFixed(1)} s · <span data-testid="sim-report-timing">{timing}</span> ·{' '}
      {v8 ? plural(r.generations, 'generation') : plural(r.resets.done, 'reset')} · {r.retention.bytesPerEventOn} bytes per event in the ring buffer with the
      map, {r.retention.bytesPerEventOff} without: ×{ratio.toFixed(2)} the events once the rings are full
      {r.retention.gain > 1 ? ` (this run kept ×${r.retention.gain})` : ''} · {plural(r.dumps, 'dump')}
    </p>
  );
}
