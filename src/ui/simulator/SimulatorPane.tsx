import { MODES } from '../../core/sim/map-layout.ts';
import { useLoadStore } from '../../state/load-store.ts';
import { simSession } from '../../state/sim-session.ts';
import { maxSimCpus, RACE_PRESET, type SimSettings } from '../../state/sim-settings.ts';
import { useSimStore } from '../../state/sim-store.ts';
import { fmtDuration, fmtInt } from '../common/format.ts';
import { CpuLanes, EventLog, LedgerPanel, SimCounters } from './LivePanels.tsx';
import { SlotGrid } from './SlotGrid.tsx';
import { useSimFrame } from './useSimFrame.ts';
import './simulator.css';

const SPEEDS: [number, string][] = [
  [2, '2 / s'],
  [5, '5 / s'],
  [20, '20 / s'],
  [200, '200 / s'],
  [2000, '2 000 / s'],
  [20000, '20 000 / s'],
  [0, 'flat out'],
];
const WINDOWS: [number, string][] = [
  [0, 'none'],
  [20, '20 µs'],
  [1000, '1 ms'],
  [20_000, '20 ms'],
  [100_000, '100 ms'],
  [300_000, '300 ms'],
  [1_000_000, '1 s'],
];

/**
 * The live simulator: the kernel's insert and reset paths on a SharedArrayBuffer, one Web Worker
 * per simulated CPU, watched as it runs; the run can be exported as a capture or opened in the explorer.
 */
export function SimulatorPane() {
  const st = useSimStore();
  const running = st.status === 'running';
  const busy = running || st.status === 'starting' || st.status === 'stopping';
  const session = simSession();
  const tick = useSimFrame(busy, 20);
  const o = st.settings;
  const captureLoaded = useLoadStore((l) => l.status === 'done');
  const set = (patch: Partial<SimSettings>) => st.set(patch);
  const isolated = globalThis.crossOriginIsolated === true;
  return (
    <main className="content simulator" data-testid="simulator" data-status={st.status} data-run={st.runId}>
      <section className="panel sim-controls" aria-label="simulator settings">
        <div className="sim-form">
          <label>
            mode
            <select data-testid="sim-mode" value={o.mode} disabled={busy} onChange={(e) => set({ mode: e.target.value as SimSettings['mode'] })}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                  {m === 'v4' ? ' (ids; reset only with tracing off)' : m === 'v7' ? ' (ids, no generation)' : ' (cookies gen·slot)'}
                </option>
              ))}
            </select>
          </label>
          <label title="the pool holds 2^bits elements; the table 2^(bits+1) slots">
            bits
            <select data-testid="sim-bits" value={o.bits} disabled={busy} onChange={(e) => set({ bits: Number(e.target.value) })}>
              {Array.from({ length: 9 }, (_, i) => 10 + i).map((b) => (
                <option key={b} value={b}>
                  {b} ({fmtInt(2 ** b)} elements)
                </option>
              ))}
            </select>
          </label>
          <label title={`one Web Worker per CPU, 1 to ${maxSimCpus()}`}>
            CPUs
            <input data-testid="sim-cpus" type="number" min={1} max={maxSimCpus()} value={o.cpus} disabled={busy} onChange={(e) => set({ cpus: clamp(Number(e.target.value), 1, maxSimCpus()) })} />
          </label>
          <fieldset className="sim-workload" disabled={busy}>
            <legend>
              workload:{' '}
              <select data-testid="sim-workload" value={o.workload} onChange={(e) => set({ workload: e.target.value as typeof o.workload })}>
                <option value="population">a stack population</option>
                <option value="replay" disabled={!captureLoaded}>
                  replay the loaded capture
                </option>
              </select>
            </legend>
            {o.workload === 'replay' ? (
              <span className="quiet" title="the explorer's current selection (range, generation, CPUs): its stacks, drawn at the frequencies they occur with">
                the explorer's selection: its stacks at their frequencies
              </span>
            ) : (
              <>
              <label title="distinct stacks">
                stacks
                <input data-testid="sim-stacks" type="number" min={1} max={100000} value={o.stacks} onChange={(e) => set({ stacks: clamp(Number(e.target.value), 1, 100000) })} />
              </label>
              <label title="Zipf exponent over the stacks' ranks (0: uniform)">
                skew
                <input data-testid="sim-zipf" type="number" min={0} max={4} step={0.1} value={o.zipf} onChange={(e) => set({ zipf: Math.max(0, Number(e.target.value) || 0) })} />
              </label>
              <label title="depth range of the stacks, 1..64">
                depth
                <input type="number" min={1} max={64} value={o.depthMin} onChange={(e) => set({ depthMin: clamp(Number(e.target.value), 1, o.depthMax) })} />–
                <input type="number" min={1} max={64} value={o.depthMax} onChange={(e) => set({ depthMax: clamp(Number(e.target.value), o.depthMin, 64) })} />
              </label>
              </>
            )}
          </fieldset>
          <label title="events per second per CPU (changes a running simulation)">
            speed
            <select data-testid="sim-speed" value={o.speed} onChange={(e) => set({ speed: Number(e.target.value) })}>
              {SPEEDS.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <label title="each insert waits this long between claiming a slot and publishing its element, and each reset between its steps, so races happen at human speed (changes a running simulation)">
            race window
            <select data-testid="sim-window" value={o.windowUs} onChange={(e) => set({ windowUs: Number(e.target.value) })}>
              {WINDOWS.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <button type="button" disabled={busy} onClick={() => set(RACE_PRESET)} title="6 hot stacks, 5 events/s per CPU, a 300 ms race window">
            Races at human speed
          </button>
        </div>
        <div className="sim-actions">
          <button type="button" className="primary" data-testid="sim-start" disabled={busy || !isolated} onClick={() => void st.start()}>
            ▶ Start
          </button>
          <button type="button" data-testid="sim-stop" disabled={!running} onClick={() => void st.stop()}>
            ■ Stop
          </button>
          <button type="button" data-testid="sim-reset" disabled={!running} onClick={() => void st.reset()} title="echo 0 > stack_map">
            Reset{st.pendingResets > 0 ? ` (${st.pendingResets} running)` : ''}
          </button>
          <button type="button" data-testid="sim-dump" disabled={!running || st.dumping} onClick={() => void st.dump()} title="read stack_map_bin and stack_map">
            {st.dumping ? 'Dumping…' : 'Dump'}
          </button>
          <span className="sim-status" data-testid="sim-status">
            {statusText(st.status)}
          </span>
          {st.status === 'stopped' && (
            <>
              <button type="button" data-testid="sim-export" onClick={() => st.download()} title="trace, stack_map_bin.N[.genG], stack_map.N, stack_map_stat, kallsyms as a .zip">
                Export capture (.zip)
              </button>
              <button type="button" className="primary" data-testid="sim-open" onClick={() => void st.openInExplorer()}>
                Open in explorer
              </button>
            </>
          )}
        </div>
        {!isolated && <p className="error">This page is not cross-origin isolated, so SharedArrayBuffer is unavailable: serve it with COOP same-origin and COEP require-corp.</p>}
        {st.error && (
          <p className="error" role="alert">
            {st.error}
          </p>
        )}
        {st.report && (
          <p className="quiet" data-testid="sim-report">
            {st.report.mode}: {fmtInt(st.report.events)} events on {st.report.cpus} CPUs in {(st.report.elapsedMs / 1000).toFixed(1)} s · {fmtDuration(st.report.nsPerInsert / 1e9)} per insert
            (median{o.windowUs > 0 ? ', race windows included' : ''}) · {st.report.generations} generations · {st.report.retention.bytesPerEventOn} bytes per event in the ring buffer with the map,{' '}
            {st.report.retention.bytesPerEventOff} without: ×{(st.report.retention.bytesPerEventOff / Math.max(1, st.report.retention.bytesPerEventOn)).toFixed(2)} the events once the rings are full
            {st.report.retention.gain > 1 ? ` (this run kept ×${st.report.retention.gain})` : ''} · {st.report.dumps} dumps
          </p>
        )}
      </section>
      {session ? (
        <>
          <div className="sim-top">
            <SlotGrid session={session} tick={tick} />
            <SimCounters session={session} />
          </div>
          <CpuLanes session={session} />
          <div className="sim-bottom">
            <LedgerPanel />
            <EventLog session={session} runId={st.runId} />
          </div>
        </>
      ) : (
        <section className="panel quiet sim-intro">
          <p>
            Runs the kernel’s stack map for real: the insert path (hash, probe, <code>cmpxchg</code> on the key, take an element, fill, publish) and the reset path (flag,
            wait for inserts in flight, clear, generation++) on one SharedArrayBuffer, with one Web Worker per simulated CPU and <code>Atomics</code> for every shared access.
          </p>
          <p>
            Start it, then Reset and Dump while it runs. The ledger resolves every record left in the ring buffers against the dumps taken, as the explorer would, and counts
            what a reader gets wrong. For races you can watch, pick <b>Races at human speed</b>. Stop, then open the run in the explorer.
          </p>
        </section>
      )}
    </main>
  );
}

const clamp = (x: number, lo: number, hi: number) => (Number.isFinite(x) ? Math.min(hi, Math.max(lo, Math.round(x))) : lo);

function statusText(s: string): string {
  return { idle: 'ready', starting: 'starting workers…', running: 'running', stopping: 'stopping…', stopped: 'stopped', error: 'error' }[s] ?? s;
}
