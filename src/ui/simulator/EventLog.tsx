import { useRef } from 'react';
import { traceSeconds, type LiveEventKind, type LogEntry } from '../../core/sim/live.ts';
import { hostNotes, type HostNote, type SimSession } from '../../state/sim/sim-session.ts';
import { fmtInt } from '../common/format.ts';
import { fillWords, resetsBefore } from './sim-words.ts';

/** The notable events of the live map, newest first, in the mode's words; repeats folded into one line. */

const TEXT: Record<LiveEventKind, (e: LogEntry, v8: boolean) => string> = {
  hit: (e) => `hit slot ${e.slot}`,
  claim: (e) => `claimed slot ${e.slot}`,
  publish: (e) => `published slot ${e.slot}`,
  unpublished: (e, v8) => `met slot ${e.slot} with the same hash, not published yet${v8 ? '' : ': v7 waits for its publish (v4 advances past it)'}`,
  gravestone: (e, v8) =>
    `met the same hash at slot ${e.slot} with no element and the pool empty (gravestone)${v8 ? '' : ': v7 waits out its bound, then records in full (v4 advances past it)'}`,
  lost: (e) => `lost the cmpxchg on slot ${e.slot} to another hash`,
  'lost-same': (e, v8) => `lost the cmpxchg on slot ${e.slot} to the same stack${v8 ? '' : ': advanced past it'}`,
  duplicate: (e) => `duplicate created: a second copy of a stack published at slot ${e.slot}`,
  'fallback-pool': (e) => `pool empty: slot ${e.slot} stays claimed with no element (gravestone); stack in full`,
  'fallback-probe': () => `64 probes without a slot: stack in full`,
  'fallback-inflight': (e) => `same stack in flight at slot ${e.slot}: stack in full (fallback)`,
  'fallback-gravestone': (e) => `met a gravestone at slot ${e.slot}: stack in full (fallback)`,
  bypass: () => `reset running: stack in full (bypass)`,
  nested: () => `an interrupt (IRQ or NMI) ran the insert path inside this CPU's own insert, between its claim and publish`,
  deep: () => `deeper than 64 frames: stack in full, the map not asked (bypass)`,
  'rcu-discard': () => `RCU not watching: stack discarded, nothing recorded`,
  'option-on': (e, v8) =>
    e.slot === 1
      ? `options/stackmap on: a new map is allocated${v8 ? `, generation ${e.generation}` : ''}`
      : `options/stackmap on: stacks go through the map again`,
  'option-off': () => `options/stackmap off: stacks in full, uncounted; the map is kept, so the buffer still resolves`,
  free: () => `free: the map is released (stack_map reads "stackmap not initialized")`,
  'free-wait': (e) =>
    e.slot > 0
      ? `free: waiting for ${e.slot} stack_map file${e.slot === 1 ? '' : 's'} opened on the map to close`
      : `free: no stack_map file open on the map, releasing it`,
  'dump-during-reset': (e) =>
    `a dump read while a reset ran came back empty (the reset had cleared the map): not kept, so the export has no empty ${['', 'stack_map_bin.N', 'stack_map.N', 'stack_map_bin.N or stack_map.N'][e.slot & 3] || 'dump'}`,
  'reset-flag': () => `reset: flag set, waiting for inserts in flight`,
  'reset-drained': () => `reset: no insert in flight, clearing the map`,
  'reset-cleared': (e, v8) => (v8 ? `reset: map cleared, generation ${e.generation}` : `reset ${resetsBefore(e.generation)}: map cleared`),
  'reset-done': (e, v8) => (v8 ? `reset done: flag dropped, generation ${e.generation}` : `reset ${resetsBefore(e.generation)} done: flag dropped`),
  ebusy: () => `reset refused: EBUSY (another reset is running)`,
  refused: () => `reset refused: tracing is on (v4)`,
  estale: (e, v8) => `stack_map_bin read failed: ESTALE (a reset landed in ${v8 ? `generation ${e.generation}'s read` : 'the read'}); reopening`,
  dump: (e, v8) => `stack_map_bin read: ${e.slot} records ${v8 ? `of generation ${e.generation}` : `(${fillWords(false, e.generation)})`}`,
  'text-spliced': (e, v8) => `stack_map (text) read spans a reset: ${e.slot} records ${v8 ? 'from two generations' : 'from both sides of it'}`,
  'v4-pause': () => `tracing off for the reset (v4 also clears the ring buffers)`,
};

const SEVERITY: Partial<Record<LiveEventKind, string>> = {
  duplicate: 'bad',
  estale: 'bad',
  'text-spliced': 'bad',
  'fallback-pool': 'bad',
  'fallback-gravestone': 'bad',
  gravestone: 'bad',
  'lost-same': 'warn',
  unpublished: 'warn',
  'fallback-inflight': 'warn',
  'fallback-probe': 'warn',
  ebusy: 'warn',
  refused: 'warn',
  'reset-flag': 'info',
  'reset-drained': 'info',
  'reset-cleared': 'info',
  'reset-done': 'info',
  dump: 'info',
  'dump-during-reset': 'warn',
  'v4-pause': 'info',
  'option-on': 'info',
  'option-off': 'warn',
  'free-wait': 'info',
  free: 'warn',
};

const NOTE_SEVERITY: Record<HostNote['kind'], string> = { uninitialized: 'warn', 'free-refused': 'warn' };

const KEEP = 400;

interface Row {
  e: LogEntry;
  n: number;
  /** a host note (the page's own observation), not a live-buffer entry */
  note?: HostNote;
}

/** Notable events, newest first; runs of the same event on the same CPU are folded (×N). */
export function EventLog({ session, runId }: { session: SimSession; runId: number }) {
  const state = useRef<{ runId: number; session: SimSession | null; next: number; notes: number; rows: Row[]; skipped: number }>({
    runId: -1,
    session: null,
    next: 0,
    notes: 0,
    rows: [],
    skipped: 0,
  });
  const s = state.current;
  if (s.runId !== runId || s.session !== session) Object.assign(s, { runId, session, next: 0, notes: 0, rows: [], skipped: 0 });
  const { entries, next, skipped } = session.live.readLog(s.next);
  s.next = next;
  s.skipped += skipped;
  const notes = hostNotes(session);
  for (; s.notes < notes.length; s.notes++) {
    const note = notes[s.notes];
    s.rows.unshift({ e: { index: -1 - s.notes, kind: 'dump', cpu: -1, slot: -1, generation: 0, ms: note.ms }, n: 1, note });
  }
  for (const e of entries) {
    const top = s.rows[0];
    // a reset makes every CPU bypass, a deep workload every CPU skip the map: one line for all of them
    const anyCpu = e.kind === 'bypass' || e.kind === 'deep';
    if (
      top &&
      !top.note &&
      top.e.kind === e.kind &&
      (anyCpu || top.e.cpu === e.cpu) &&
      (anyCpu || e.kind === 'fallback-pool' || e.kind === 'fallback-probe' || top.e.slot === e.slot)
    ) {
      top.n++;
      top.e = { ...e, cpu: top.e.cpu === e.cpu ? e.cpu : -2 };
    } else s.rows.unshift({ e, n: 1 });
  }
  if (s.rows.length > KEEP) s.rows.length = KEEP;
  const v8 = session.sim.config.mode === 'v8';
  type Line = { key: string; ms: number; kind: string; cls: string; who: string; text: string; n: number };
  const lines: Line[] = s.rows.map((r) =>
    r.note
      ? { key: `n${-1 - r.e.index}`, ms: r.note.ms, kind: r.note.kind, cls: NOTE_SEVERITY[r.note.kind], who: 'tracefs', text: r.note.text, n: 1 }
      : {
          key: `e${r.e.index}`,
          ms: r.e.ms,
          kind: r.e.kind,
          cls: SEVERITY[r.e.kind] ?? '',
          who: r.e.cpu === -2 ? 'CPUs' : r.e.cpu < 0 ? 'tracefs' : `CPU ${r.e.cpu}`,
          text: TEXT[r.e.kind](r.e, v8),
          n: r.n,
        },
  );
  const kinds = new Set(lines.map((l) => l.kind));
  return (
    <section className="panel sim-log-panel" aria-label="event log">
      <div className="pane-head">
        <h2>Notable events</h2>
        <span className="quiet">
          {fmtInt(session.live.logged)} logged{s.skipped ? `, ${fmtInt(s.skipped)} scrolled past unseen` : ''}
        </span>
      </div>
      <ol
        className="sim-log mono"
        data-testid="sim-log"
        data-kinds={[...kinds].sort().join(' ')}
        // exact totals of the reset's steps, which a busy log can scroll past the rows kept
        data-total-reset-flag={session.live.total('reset-flag')}
        data-total-reset-done={session.live.total('reset-done')}
        data-total-dump={session.live.total('dump')}
        data-total-estale={session.live.total('estale')}
        data-total-text-spliced={session.live.total('text-spliced')}
        data-total-nested={session.live.total('nested')}
      >
        {lines.length === 0 && (
          <li className="quiet">nothing yet: lost cmpxchgs, unpublished hits, duplicates, fallbacks, gravestones, resets and ESTALE show here</li>
        )}
        {lines.slice(0, 150).map((l) => (
          <li key={l.key} className={l.cls} data-kind={l.kind}>
            <span className="t">{traceSeconds(l.ms).toFixed(3)}</span>
            <span className="who">{l.who}</span>
            <span>
              {l.text}
              {l.n > 1 && <b> ×{l.n}</b>}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}

/** Every record left in the ring buffers, resolved against the dumps taken, compared with the truth. */
