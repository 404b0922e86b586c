import { LANE_STATE } from '../../core/sim/live.ts';
import { writeStackMapStat } from '../../core/formats/stack-map-write.ts';
import { C, INSERT_BOOT, INSERT_BYPASS, INSERT_DEEP, INSERT_OFF, K, MAX_DEPTH } from '../../core/sim/map-layout.ts';
import { REC } from '../../core/sim/ring.ts';
import { hasBinExport } from '../../core/sim/sim-options.ts';
import { simSession, type SimSession } from '../../state/sim/sim-session.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { fmtInt, fmtPct } from '../common/format.ts';
import { fillWords } from './sim-words.ts';

/** Why a record is a full stack (the insert's result, below 0): its chip and its words. */
const FULL_WHY: Record<number, { label: string; cls: string; why: string }> = {
  [INSERT_BYPASS]: { label: 'bypass', cls: 'bypass', why: 'bypass, a reset was running (uncounted)' },
  [INSERT_DEEP]: { label: 'deep', cls: 'deep', why: `deeper than ${MAX_DEPTH} frames: the map is not asked (uncounted)` },
  [INSERT_OFF]: { label: 'off', cls: 'off', why: 'options/stackmap off or the map freed (uncounted)' },
  [INSERT_BOOT]: { label: 'boot', cls: 'off', why: 'before the map was published (the boot window): the regular full-stack path' },
};

/** What each CPU is doing, and its most recent stack records (newest left). */
export function CpuLanes({ session }: { session: SimSession }) {
  const { sim, live } = session;
  const i32 = sim.map.i32;
  const v8 = sim.config.mode === 'v8';
  return (
    <section className="panel" aria-label="CPUs">
      <h2>CPUs</h2>
      <div className="sim-lanes" data-testid="sim-lanes">
        {Array.from({ length: sim.config.cpus }, (_, cpu) => {
          const l = live.laneView(cpu);
          const parked = Atomics.load(i32, sim.map.cpuWord(cpu, K.PAUSED)) !== 0;
          const events = Atomics.load(i32, sim.map.cpuWord(cpu, K.PROGRESS));
          let state: string;
          let cls = '';
          if (l.state === LANE_STATE.STOPPED) state = 'stopped';
          else if (parked)
            state = sim.config.mode === 'v4' && Atomics.load(i32, C.RECORDING) === 0 ? 'tracing off (v4 reset)' : 'parked (host reads the rings)';
          else if (l.state === LANE_STATE.CLAIMED) {
            state = `claimed slot ${l.slot}, not published yet`;
            cls = 'claimed';
          } else if (l.state === LANE_STATE.NESTED) {
            state = `an interrupt's insert inside its own (slot ${l.slot} claimed, not published)`;
            cls = 'claimed';
          } else if (l.state === LANE_STATE.BYPASS) {
            state = 'reset running: writing full stacks';
            cls = 'bypass';
          } else if (!events) state = 'starting';
          else if (!sim.map.optionOn || !sim.map.allocated) {
            state = sim.map.allocated ? 'options/stackmap off: full stacks' : 'map freed: full stacks';
            cls = 'bypass';
          } else state = Atomics.load(i32, C.PACE_US) >= 50_000 ? 'between events' : 'recording';
          return (
            <div className="sim-lane" key={cpu} data-testid="sim-lane" data-cpu={cpu} data-events={events}>
              <span className="sim-lane-cpu">CPU {cpu}</span>
              <span className={`sim-lane-state ${cls}`}>{state}</span>
              <span className="sim-lane-events mono">{fmtInt(events)} ev</span>
              <span className="sim-recent">
                {l.recent.map((r, i) =>
                  r.type === REC.FULL ? (
                    <span
                      key={i}
                      className={`sim-rec ${FULL_WHY[r.slot]?.cls ?? 'full'}`}
                      data-full={FULL_WHY[r.slot]?.label ?? 'full'}
                      title={`stack ${r.stack} in full: ${FULL_WHY[r.slot]?.why ?? 'fallback'}`}
                    >
                      {FULL_WHY[r.slot]?.label ?? 'full'}
                    </span>
                  ) : (
                    <span
                      key={i}
                      className="sim-rec id"
                      title={`stack ${r.stack}, ${v8 ? `cookie gen ${r.generation} slot ${r.slot}` : `id ${r.slot}, written ${fillWords(false, r.generation)} (an id names a slot: after a reset it can name another stack)`}`}
                    >
                      {v8 ? `${r.slot}·g${r.generation}` : r.slot}
                    </span>
                  ),
                )}
              </span>
            </div>
          );
        })}
      </div>
    </section>
  );
}

/** The map's counters summed over CPUs, read live, and stack_map_stat as the mode prints it. */
export function SimCounters({ session }: { session: SimSession }) {
  const { sim, live } = session;
  const c = sim.map.counters();
  const i32 = sim.map.i32;
  const st = useSimStore();
  const t = live.totals();
  const dupLive = st.current?.duplicates ?? 0;
  const dupPast = st.snapshots.reduce((n, s) => n + s.duplicates, 0);
  const v8 = sim.config.mode === 'v8';
  let events = 0;
  for (let cpu = 0; cpu < sim.config.cpus; cpu++) events += Atomics.load(i32, sim.map.cpuWord(cpu, K.PROGRESS));
  // every event either asks the map (an attempt), is too deep, is discarded (v8, RCU) or meets the option off / a freed map
  const off = Math.max(0, events - c.attempts - c.deep - c.rcuDiscards);
  const cells: [string, string, number | string, string][] = [
    ['attempts', 'attempts', c.attempts, 'inserts tried: events whose stack asked the map'],
    ['successes', 'successes', c.successes, 'an id or cookie was written'],
    [
      'fallbacks',
      'fallbacks',
      c.fallbacks,
      `stack written in full: pool empty ${c.fallbacksPoolEmpty}, probe limit ${c.fallbacksProbeLimit}, in flight ${c.fallbacksInFlight}, gravestone ${c.fallbacksGravestone}`,
    ],
    ['bypasses', 'bypasses', c.bypasses, 'inserts that met the reset flag: full stack'],
    [
      'deep',
      `deeper than ${MAX_DEPTH}: in full, uncounted`,
      c.deep,
      `stacks deeper than ${MAX_DEPTH} frames never reach the map: recorded in full, not in successes or ${v8 ? 'fallbacks' : 'drops'}`,
    ],
    [
      'rcu',
      'discarded (RCU not watching)',
      v8 ? c.rcuDiscards : '—',
      v8
        ? 'stacks taken while RCU was not watching: v8 discards them, nothing is recorded'
        : 'only v8 discards stacks taken while RCU is not watching; v4 and v7 record them',
    ],
    [
      'off',
      'in full, option off',
      off,
      'events recorded while options/stackmap was off or the map freed: every stack in full, uncounted (events − attempts − deeper − discarded)',
    ],
    ['entries', 'entries / capacity', `${fmtInt(sim.map.entries)} / ${fmtInt(sim.map.capacity)}`, 'elements taken since the last reset'],
    [
      'duplicates',
      'duplicates',
      t.duplicate,
      `second copies published (v4/v7) since the start; ${v8 ? 'the current generation' : 'the table'} holds ${dupLive} at the last look, ${v8 ? 'ended generations' : 'tables cleared by resets'} ${dupPast}`,
    ],
    ['lost', 'lost cmpxchg', t['lost-same'] + t.lost, `to the same stack ${t['lost-same']}, to another hash ${t.lost}`],
    [
      'unpublished',
      'unpublished hits',
      t.unpublished,
      `met the same hash before its element was published; and ${t.gravestone} times a gravestone (same hash, pool empty)`,
    ],
    ['resets', 'resets', Atomics.load(i32, C.RESETS), `EBUSY ${Atomics.load(i32, C.EBUSY)}, refused ${Atomics.load(i32, C.REFUSED)}`],
    ['ebusy', 'EBUSY', Atomics.load(i32, C.EBUSY), 'a reset while another one ran'],
    ['estale', 'ESTALE', st.estale, 'stack_map_bin reads a reset broke (reopened)'],
    ['dumps', 'dumps', st.dumps, 'stack_map_bin and stack_map reads kept'],
  ];
  return (
    <section className="panel" aria-label="counters">
      <h2>Counters</h2>
      <div className="cells sim-cells">
        {cells.map(([id, label, v, title]) => (
          <div className="cell" key={id} title={title}>
            <div className="value" data-testid={`sim-counter-${id}`}>
              {typeof v === 'number' ? fmtInt(v) : v}
            </div>
            <div className="label">{label}</div>
          </div>
        ))}
      </div>
      <StatView session={session} successes={c.successes} fallbacks={c.fallbacks} />
    </section>
  );
}

/**
 * stack_map_stat as the mode prints it (the export writes the same lines), beside the run's
 * totals: v4 zeroes successes and drops on reset, v7 and v8 count them since boot while entries
 * counts since the last reset.
 */
function StatView({ session, successes, fallbacks }: { session: SimSession; successes: number; fallbacks: number }) {
  const m = session.sim.map;
  const mode = session.sim.config.mode;
  const v8 = mode === 'v8';
  const stat = m.statCounters();
  const resets = Atomics.load(m.i32, C.RESETS);
  const drops = v8 ? 'fallbacks' : 'drops';
  const text = !m.allocated
    ? writeStackMapStat({ version: 'v8', uninitialized: true })
    : v8
      ? writeStackMapStat({
          version: 'v8',
          generation: m.generation,
          entries: m.entries,
          capacity: m.capacity,
          successes: stat.successes,
          fallbacks: stat.drops,
        })
      : writeStackMapStat({
          version: 'v7',
          entries: m.entries,
          capacity: m.capacity,
          tableSize: m.slots,
          successes: stat.successes,
          drops: stat.drops,
          successRate: stat.successes + stat.drops ? Math.floor((100 * stat.successes) / (stat.successes + stat.drops)) : 0,
        });
  const says =
    mode === 'v4'
      ? `v4 zeroes successes and drops at each reset, as it clears entries: ${resets ? `they count since reset ${resets}` : 'no reset yet, so they count since the start'} (v4 is in no seed: modelled from the earlier series).`
      : `${mode} counts successes and ${drops} since boot, while entries counts since the last reset${resets ? `: ${fmtInt(resets)} reset${resets === 1 ? '' : 's'} later, successes keep growing while entries started again from 0` : ''} ("since boot" is this model's reading: the seeds say only that entries counts since the last reset).`;
  return (
    <div className="sim-stat" data-testid="sim-stat" data-successes={stat.successes} data-drops={stat.drops} data-uninitialized={m.allocated ? '0' : '1'}>
      <pre className="mono" data-testid="sim-stat-text" title="cat stack_map_stat">
        {text}
      </pre>
      <div>
        <p>
          <b>stack_map_stat</b> <span className="quiet">(what the file says now)</span>
        </p>
        <p className="quiet sim-stat-vs">
          this run: successes <b>{fmtInt(successes)}</b>, {drops} <b>{fmtInt(fallbacks)}</b>
        </p>
        <p className="quiet" data-testid="sim-stat-says">
          {m.allocated ? says : 'the map is freed: the file reads “stackmap not initialized” until options/stackmap is on again.'}
        </p>
      </div>
    </div>
  );
}

export function LedgerPanel() {
  const ledger = useSimStore((s) => s.ledger);
  const status = useSimStore((s) => s.status);
  const dumps = useSimStore((s) => s.dumps);
  const mode = useSimStore((s) => s.report?.mode ?? s.settings.mode);
  const settings = useSimStore((s) => s.settings);
  const bin = hasBinExport(simSession()?.sim.options ?? settings);
  if (!ledger)
    return (
      <section className="panel" aria-label="ledger">
        <h2>Ledger</h2>
        <p className="quiet">Computed every second while running, on Dump and on Stop.</p>
      </section>
    );
  const l = ledger.counts;
  const what = mode === 'v8' ? 'cookies' : 'ids';
  // with no dump, nothing can resolve: that is not a finding about the mode, so no shares are shown
  const noDump = dumps === 0;
  return (
    <section className="panel" aria-label="ledger" data-testid="sim-ledger" data-dumps={dumps}>
      <div className="pane-head">
        <h2>Ledger</h2>
        <span className="quiet">
          {status === 'stopped'
            ? 'final, after the dumps at stop'
            : noDump
              ? `at ${(ledger.atMs / 1000).toFixed(1)} s`
              : `at ${(ledger.atMs / 1000).toFixed(1)} s, against the dumps taken so far`}
        </span>
      </div>
      {noDump ? (
        <p className="sim-nodump" data-testid="sim-ledger-nodump">
          <b>no dump yet</b>: the {fmtInt(l.ids)} {what} left in the ring buffers name slots of a map nobody has read, so none can be resolved. Dump reads{' '}
          {bin ? (
            <>
              <code>stack_map_bin</code> and <code>stack_map</code>
            </>
          ) : (
            <code>stack_map</code>
          )}
          ; Stop takes a last dump.
        </p>
      ) : (
        <>
          <LedgerCells counts={l} mode={mode} />
        </>
      )}
      {noDump && (
        <div className="cells sim-cells">
          <FullCell n={l.full} />
        </div>
      )}
      <p className="quiet">
        Left in the ring buffers: <b data-testid="sim-retained-events">{ledger.events}</b> events, <b data-testid="sim-ledger-records">{l.records}</b> stack
        records (<b data-testid="sim-ledger-ids">{l.ids}</b> {what} + {l.full} full). Opened in the explorer: events = events left + the reset markers (a
        trace_marker line per reset), cookies = ids, resolved = correct + wrong, unresolved = detected + unresolved.
      </p>
    </section>
  );
}

type LedgerCounts = { correct: number; wrong: number; detected: number; unresolved: number; ids: number; full: number };

/**
 * The ledger's verdict on every id or cookie left in the rings: a bar of the four outcomes and
 * their counts with shares. The ledger panel's, and beside a finished run's stories (`where`
 * 'stories': test ids of their own, so both can be on the page at once).
 */
export function LedgerCells({ counts: l, mode, where = 'ledger' }: { counts: LedgerCounts; mode: string; where?: 'ledger' | 'stories' }) {
  const v8 = mode === 'v8';
  const parts: [string, string, number, string][] = [
    ['correct', 'correct', l.correct, 'resolved to the stack it stood for'],
    ['wrong', 'wrong stack', l.wrong, 'resolved to another stack, silently: the slot was reused after a reset'],
    [
      'detected',
      'detected',
      l.detected,
      v8 ? 'the reader is told: no dump of the cookie’s generation, or the slot is missing' : 'ambiguous: the dumps disagree about the slot',
    ],
    ['unresolved', 'unresolved', l.unresolved, 'no dump, or the dump lacks the slot'],
  ];
  const total = Math.max(1, l.ids);
  const id = (k: string) => (where === 'ledger' ? `sim-ledger-${k}` : `sim-stories-ledger-${k}`);
  return (
    <>
      <div className="sim-ledger-bar" aria-hidden>
        {parts.map(([k, , n]) => (
          <i key={k} className={k} style={{ width: `${(100 * n) / total}%` }} />
        ))}
      </div>
      <div className="cells sim-cells">
        {parts.map(([k, label, n, title]) => (
          <div className={`cell ledger-${k}`} key={k} title={title}>
            <div className="value" data-testid={id(k)}>
              {fmtInt(n)}
            </div>
            <div className="label">
              {label} · {fmtPct(n / total)}
            </div>
          </div>
        ))}
        {where === 'ledger' && <FullCell n={l.full} />}
      </div>
    </>
  );
}

function FullCell({ n }: { n: number }) {
  return (
    <div
      className="cell"
      title="stack records written in full (fallbacks, bypasses, stacks deeper than 64 frames, and every stack while options/stackmap is off): they carry their own stack"
    >
      <div className="value" data-testid="sim-ledger-full">
        {fmtInt(n)}
      </div>
      <div className="label">full stacks</div>
    </div>
  );
}
