import { useState } from 'react';
import { MAX_DEPTH, MAX_WORKLOAD_DEPTH, MODES } from '../../core/sim/map-layout.ts';
import { hasBinExport } from '../../core/sim/sim-options.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useScenarioStore } from '../../state/sim/sim-scenario.ts';
import { simSession } from '../../state/sim/sim-session.ts';
import {
  bitsOf,
  cpuLimitNote,
  liveStacksOf,
  MAX_LIVE_STACKS,
  maxSimCpus,
  PHASE_SHIFTS,
  RACE_PRESET,
  RCU_SHARES,
  INTERRUPT_RATES,
  RING_KBS,
  ringLabel,
  SPEEDS,
  WINDOWS,
  type SimSettings,
} from '../../state/sim/sim-settings.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { fmtInt } from '../common/format.ts';
import { EventLog } from './EventLog.tsx';
import { CpuLanes, LedgerPanel, SimCounters } from './LivePanels.tsx';
import { MapLifecycle, ReportLine } from './SimStatusLines.tsx';
import { SlowMotion } from './SlowMotion.tsx';
import { ScenarioList } from './ScenarioList.tsx';
import { IdStories } from './IdStories.tsx';
import { SlotGrid } from './SlotGrid.tsx';
import { useSimFrame } from './useSimFrame.ts';
import './simulator.css';

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
  const maxCpus = maxSimCpus();
  const [cpusCapped, setCpusCapped] = useState(false);
  // the guided scenarios fold away once a run of one's own starts, so the live panels show without scrolling
  const [scenariosOpen, setScenariosOpen] = useState(true);
  const scenarioBusy = useScenarioStore((x) => x.running !== null);
  const lastScenario = useScenarioStore((x) => x.last);
  const v8 = o.mode === 'v8';
  const posted = v8 && o.v8Variant === 'posted';
  const map = session?.sim.map ?? null;
  const optionOn = map ? map.optionOn : true;
  const allocated = map ? map.allocated : true;
  const sessionV8 = session?.sim.config.mode === 'v8';
  const phased = o.workload === 'population' && o.phaseShift > 0;
  // while a run goes, these show what it runs with (a guided scenario sets its own)
  const runOpts = busy && session ? session.sim.options : null;
  const phaseShown = runOpts ? runOpts.phaseShift : o.phaseShift;
  const rcuShown = runOpts ? runOpts.rcuOffShare : o.rcuOffShare;
  const irqShown = runOpts ? runOpts.irqRate : o.irqRate;
  const nmiShown = runOpts ? runOpts.nmiRate : o.nmiRate;
  return (
    <main className="content simulator" data-testid="simulator" data-status={st.status} data-run={st.runId}>
      <section className="panel sim-controls" aria-label="simulator settings">
        <div className="sim-form">
          <label title="v4 and v7 write a 4-byte id (the slot) and print no generation; v4 resets only with tracing off and clears the ring buffer too, v7 leaves it alone; v8 writes an 8-byte cookie, generation and slot">
            mode
            <select data-testid="sim-mode" value={o.mode} disabled={busy} onChange={(e) => set({ mode: e.target.value as SimSettings['mode'] })}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                  {m === 'v4' ? ' (ids; reset with tracing off; in no seed)' : m === 'v7' ? ' (ids)' : ' (cookies gen·slot)'}
                </option>
              ))}
            </select>
          </label>
          {o.mode === 'v8' && (
            <label title="v8 as the series posted it (the default): capacity fixed at 16,384 stacks, only the text stack_map. The cover letter leaves the binary export and the capacity boot parameter to a later series; the cookie ABI mail proposes stack_map_bin version 2 with the generation in its header: that is the second choice">
              v8
              <select data-testid="sim-v8" value={o.v8Variant} disabled={busy} onChange={(e) => set({ v8Variant: e.target.value as SimSettings['v8Variant'] })}>
                <option value="posted">as posted (16,384, stack_map)</option>
                <option value="bin">+ proposed binary v2 and bits</option>
              </select>
            </label>
          )}
          <label
            title={
              posted
                ? 'v8 as posted has no bits parameter: 16,384 elements, 32,768 slots (the follow-up adds one)'
                : 'the pool holds 2^bits elements; the table 2^(bits+1) slots'
            }
          >
            bits
            <select data-testid="sim-bits" value={bitsOf(o)} disabled={busy || posted} onChange={(e) => set({ bits: Number(e.target.value) })}>
              {Array.from({ length: 9 }, (_, i) => 10 + i).map((b) => (
                <option key={b} value={b}>
                  {b} ({fmtInt(2 ** b)} elements)
                </option>
              ))}
            </select>
          </label>
          <label title={cpuLimitNote()}>
            <span>
              CPUs <span className="sim-hint">≤ {maxCpus}</span>
            </span>
            <input
              data-testid="sim-cpus"
              type="number"
              min={1}
              max={maxCpus}
              value={o.cpus}
              disabled={busy}
              onChange={(e) => {
                setCpusCapped(Number(e.target.value) > maxCpus);
                set({ cpus: clamp(Number(e.target.value), 1, maxCpus) });
              }}
            />
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
                <label
                  title={`distinct stacks${phased ? `; with the stacks changing after each reset, all 16 phases are built up front: ${fmtInt(liveStacksOf(o))} stacks (at most ${fmtInt(MAX_LIVE_STACKS)})` : ''}`}
                >
                  stacks
                  <input
                    data-testid="sim-stacks"
                    type="number"
                    min={1}
                    max={100000}
                    value={o.stacks}
                    onChange={(e) => set({ stacks: clamp(Number(e.target.value), 1, 100000) })}
                  />
                </label>
                <label title="Zipf exponent over the stacks' ranks (0: uniform)">
                  skew
                  <input
                    data-testid="sim-zipf"
                    type="number"
                    min={0}
                    max={4}
                    step={0.1}
                    value={o.zipf}
                    onChange={(e) => set({ zipf: Math.max(0, Number(e.target.value) || 0) })}
                  />
                </label>
                <label
                  className="sim-depth"
                  title={`depth range of the stacks, 1..${MAX_WORKLOAD_DEPTH}: a stack deeper than ${MAX_DEPTH} frames never reaches the map; it is recorded in full and not counted`}
                >
                  depth
                  <input
                    data-testid="sim-depth-min"
                    type="number"
                    min={1}
                    max={MAX_WORKLOAD_DEPTH}
                    value={o.depthMin}
                    onChange={(e) => set({ depthMin: clamp(Number(e.target.value), 1, o.depthMax) })}
                  />
                  –
                  <input
                    data-testid="sim-depth-max"
                    type="number"
                    min={1}
                    max={MAX_WORKLOAD_DEPTH}
                    value={o.depthMax}
                    onChange={(e) => set({ depthMax: clamp(Number(e.target.value), o.depthMin, MAX_WORKLOAD_DEPTH) })}
                  />
                </label>
                <label title="After each Reset the CPUs move to the next phase of the workload: this share of the stacks is replaced and their popularity shifts by as many ranks; 'all' records a new population, as when a user resets between test phases. For v7 pick 'all: a new population': only a workload that changes makes an id written before a reset resolve to another stack.">
                  after each reset, change the stacks
                  <select data-testid="sim-phase" value={phaseShown} onChange={(e) => set({ phaseShift: Number(e.target.value) })}>
                    {PHASE_SHIFTS.map(([v, l]) => (
                      <option key={v} value={v}>
                        {l}
                      </option>
                    ))}
                  </select>
                </label>
              </>
            )}
            <label
              title={
                v8
                  ? 'the share of stacks taken while RCU is not watching (idle, early entry code): v8 discards them in record_stackmap(), writing nothing, and counts them'
                  : 'only v8 discards stacks taken while RCU is not watching; v4 and v7 record them like any other stack'
              }
            >
              RCU not watching
              <select data-testid="sim-rcu" value={v8 ? rcuShown : 0} disabled={!v8} onChange={(e) => set({ rcuOffShare: Number(e.target.value) })}>
                {v8 ? (
                  RCU_SHARES.map(([v, l]) => (
                    <option key={v} value={v}>
                      {l}
                    </option>
                  ))
                ) : (
                  <option value={0} data-testid="sim-rcu-note">
                    only v8 discards them
                  </option>
                )}
              </select>
            </label>
            {(['irq', 'nmi'] as const).map((k) => (
              <label
                key={k}
                title={`the chance, at each point between an insert's claim and its publish, that ${k === 'irq' ? 'an IRQ' : 'an NMI (also inside an IRQ)'} arrives on that CPU and records an event with a stack through the same insert path, nested (half of them the interrupted stack): v8 records that stack in full; v7 waits for the interrupted insert to publish, which it cannot do on its own CPU, so after its bound it records the stack in full`}
              >
                {k === 'irq' ? 'IRQs in an insert' : 'NMIs in an insert'}
                <select
                  data-testid={`sim-${k}`}
                  value={k === 'irq' ? irqShown : nmiShown}
                  disabled={busy}
                  onChange={(e) => set(k === 'irq' ? { irqRate: Number(e.target.value) } : { nmiRate: Number(e.target.value) })}
                >
                  {INTERRUPT_RATES.map(([v, l]) => (
                    <option key={v} value={v}>
                      {l}
                    </option>
                  ))}
                </select>
              </label>
            ))}
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
          <label title="each CPU's ring buffer (buffer_size_kb): once full, the oldest records are overwritten, and records whose ids no dump resolves drop out with them">
            ring buffer per CPU
            <select data-testid="sim-ring" value={o.ringKb} disabled={busy} onChange={(e) => set({ ringKb: Number(e.target.value) })}>
              {RING_KBS.map((kb) => (
                <option key={kb} value={kb}>
                  {ringLabel(kb)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" disabled={busy} onClick={() => set(RACE_PRESET)} title="6 hot stacks, 5 events/s per CPU, a 300 ms race window">
            Races at human speed
          </button>
        </div>
        <div className="sim-actions">
          <button
            type="button"
            className="primary"
            data-testid="sim-start"
            disabled={busy || !isolated}
            onClick={() => {
              setScenariosOpen(false);
              // a free-form run: its stories go under its ledger, not under a scenario's verdict
              useScenarioStore.setState({ last: null });
              void st.start();
            }}
          >
            ▶ Start
          </button>
          <button type="button" data-testid="sim-stop" disabled={!running} onClick={() => void st.stop()}>
            ■ Stop
          </button>
          <button type="button" data-testid="sim-reset" disabled={!running} onClick={() => void st.reset()} title="echo 0 > stack_map">
            Reset{st.pendingResets > 0 ? ` (${st.pendingResets} running)` : ''}
          </button>
          <button
            type="button"
            data-testid="sim-dump"
            disabled={!running || st.dumping}
            onClick={() => void st.dump()}
            title={hasBinExport(session?.sim.options ?? o) ? 'read stack_map_bin and stack_map' : 'read stack_map (v8 as posted has no stack_map_bin)'}
          >
            {st.dumping ? 'Dumping…' : 'Dump'}
          </button>
          <span className="sim-lifecycle-buttons">
            <button
              type="button"
              data-testid="sim-option"
              aria-pressed={optionOn}
              // not while a free waits for its readers: it was asked for a map whose option is off
              disabled={!running || st.freeing}
              onClick={() => st.setOption(!optionOn)}
              title={`echo ${optionOn ? 0 : 1} > options/stackmap. Off: every stack is recorded in full and not counted; the map is kept, so the ids${sessionV8 || v8 ? ' and cookies' : ''} already in the ring buffer still resolve.${!allocated ? ' On: allocates a new map (its generation continues).' : ''}`}
            >
              options/stackmap: <b>{optionOn ? 'on' : 'off'}</b>
            </button>
            <button
              type="button"
              data-testid="sim-free"
              disabled={!running || !sessionV8 || optionOn || !allocated || st.freeing}
              onClick={() => void st.free()}
              title={
                (session ? sessionV8 : v8)
                  ? 'echo free > stack_map: releases the map once options/stackmap is off; waits until the stack_map files opened on it are closed, so a reader that started before reads a complete map'
                  : 'only v8 frees the map (echo free > stack_map); v4 and v7 keep it allocated'
              }
            >
              {st.freeing ? 'Freeing…' : 'Free'}
            </button>
          </span>
          <span className="sim-status" data-testid="sim-status">
            {statusText(st.status)}
          </span>
          {st.status === 'stopped' && (
            <>
              <button
                type="button"
                data-testid="sim-export"
                onClick={() => st.download()}
                title="trace, stack_map_bin.N[.genG], stack_map.N, stack_map_stat, kallsyms as a .zip"
              >
                Export capture (.zip)
              </button>
              <button type="button" className="primary" data-testid="sim-open" onClick={() => void st.openInExplorer()}>
                Open in explorer
              </button>
            </>
          )}
        </div>
        {!isolated && (
          <p className="error">
            This page is not cross-origin isolated, so SharedArrayBuffer is unavailable: serve it with COOP same-origin and COEP require-corp.
          </p>
        )}
        {st.error && (
          <p className="error" role="alert">
            {st.error}
          </p>
        )}
        {cpusCapped && (
          <p className="quiet sim-note" data-testid="sim-cpus-note">
            CPUs: {cpuLimitNote()}.
          </p>
        )}
        {session && <MapLifecycle session={session} freeing={st.freeing} />}
        {st.report && <ReportLine report={st.report} windowUs={o.windowUs} />}
      </section>
      <SlowMotion />
      <details
        className="sim-scenarios-fold"
        data-testid="sim-scenarios-fold"
        open={scenariosOpen || scenarioBusy}
        onToggle={(e) => setScenariosOpen((e.currentTarget as HTMLDetailsElement).open)}
      >
        <summary>
          <b>Guided scenarios</b> <span className="sim-hint">each sets the pane, runs to the end and checks that its effect appeared</span>
        </summary>
        <ScenarioList />
      </details>
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
          {/* a free-form run's stories, below its ledger (a guided one shows them under its verdict) */}
          {!lastScenario && <IdStories />}
        </>
      ) : (
        <section className="panel quiet sim-intro" data-testid="sim-intro">
          <p>
            Runs the kernel’s stack map for real: the insert path (hash, probe, <code>cmpxchg</code> on the key, take an element, fill, publish) and the reset
            path (flag, wait for inserts in flight, clear, and in v8 generation++) on one SharedArrayBuffer, with one Web Worker per simulated CPU and{' '}
            <code>Atomics</code> for every shared access.
          </p>
          <p>
            Start it and watch the slot table fill; Reset clears it (<code>echo 0 &gt; stack_map</code>) and Dump reads <code>stack_map</code>, and{' '}
            <code>stack_map_bin</code> where the mode has one. The ledger resolves every record left in the ring buffers against the dumps taken, as the
            explorer would, and counts what a reader gets wrong. Whether v4 or v7 ids resolve to the wrong stack depends on the workload: while the same stacks
            keep landing in the same slots, a reset changes nothing a reader could see, so set <b>after each reset, change the stacks</b> to <b>all</b>. Each
            guided scenario above makes one effect happen on every run: start with <b>v7: an old id resolves to the wrong stack</b>, then{' '}
            <b>v8: the same run</b>. For races you can watch by hand, pick <b>Races at human speed</b>. Stop, then open the run in the explorer.
          </p>
          <p>
            v8 runs as the series posted it (16,384 stacks, text <code>stack_map</code> only) unless you pick the proposed binary export. Its lifecycle is there
            too: turn <code>options/stackmap</code> off (stacks in full, the map kept so the buffer still resolves), then <b>Free</b> it (it waits for open{' '}
            <code>stack_map</code> readers); turning the option on again allocates a new map.
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
