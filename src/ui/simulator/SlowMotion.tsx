import { useEffect, useRef } from 'react';
import { traceSeconds } from '../../core/sim/live.ts';
import type { Beat } from '../../core/sim/slow-motion.ts';
import { simSession } from '../../state/sim/sim-session.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { useSlowMotion } from '../../state/sim/slow-motion.ts';
import { StackPair } from '../common/StackPair.tsx';

/** A stack's frames as the run's kernel prints them, leaf first. */
function framesOf(stack: number): string[] | null {
  const pop = simSession()?.sim.population;
  const ips = stack >= 0 ? pop?.ips[stack] : undefined;
  return pop && ips ? Array.from(ips, (ip) => pop.kernel.printFrame(ip)) : null;
}

/** A stack's name in this run: a letter (A-Z, then A2-Z2, ...), in the order the workload uses them. */
const nameOf = (stack: number) => `${String.fromCharCode(65 + (stack % 26))}${stack >= 26 ? Math.floor(stack / 26) + 1 : ''}`;

/** A stack in a few words: its name and its leaf functions. */
function leafWords(stack: number): string {
  const f = framesOf(stack);
  if (!f) return 'no stack';
  const leaf = f
    .slice(0, 2)
    .map((x) => x.split('+')[0])
    .join(' ← ');
  return `stack ${nameOf(stack)} (${leaf} ← …)`;
}

/** the trace's clock, as the event log, the stories and the explorer's timeline print it */
const secs = (ms: number) => `${traceSeconds(ms).toFixed(3)} s`;

function recordOf(b: Beat, v8: boolean): string {
  return v8 ? `<stack_id ${b.slot} gen ${b.generation}>` : `<stack_id ${b.slot}>`;
}

function beatWords(b: Beat, v8: boolean): string {
  switch (b.kind) {
    case 'written':
      return `CPU ${b.cpu} writes ${recordOf(b, v8)} for ${leafWords(b.stack)}`;
    case 'reset':
      return `echo 0 > stack_map: the map is emptied${v8 ? `, generation ${b.generation} begins` : ''}; the ${v8 ? 'cookies' : 'ids'} above stay in the ring buffer`;
    case 'refilled':
      return `slot ${b.slot} is taken by another stack: ${leafWords(b.stack)}`;
    case 'wrong':
      return `a reader resolves ${recordOf(b, v8)} (written at ${secs(b.writtenMs)} for ${leafWords(b.stack)}): it reads as ${leafWords(b.other)}. Wrong, and nothing in the id says so`;
    case 'refused':
      return `a reader resolves ${recordOf(b, v8)} (written at ${secs(b.writtenMs)}): the map is at another generation, so the cookie is refused as stale, though slot ${b.slot} now holds ${leafWords(b.other)}`;
    case 'same':
      return `a reader resolves ${recordOf(b, v8)}: the same stack came back to slot ${b.slot}, so it reads right`;
  }
}

/**
 * Watch one reset race at human speed (issue 36): two CPUs, four stacks, one event a second per
 * CPU; the reset comes once every stack has an id, the new stacks take the old slots, and each old
 * id is read back the moment its slot is refilled: v7 as the stranger (marked), v8 refused by its
 * generation. Pause and Step; the run is the simulator's own, so its slot table, lanes, log and
 * ledger below show it too.
 */
export function SlowMotion() {
  const st = useSlowMotion();
  const simStatus = useSimStore((s) => s.status);
  const listRef = useRef<HTMLOListElement>(null);
  const v8 = st.mode === 'v8';
  const active = st.status !== 'idle' && st.status !== 'ended';
  useEffect(() => {
    const el = listRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [st.beats.length]);
  const reads = st.beats.filter((b) => b.kind === 'wrong' || b.kind === 'refused');
  const last = reads[reads.length - 1];
  const busy = simStatus === 'starting' || simStatus === 'stopping';
  return (
    <section
      className="panel sim-slow"
      data-testid="slow-motion"
      data-status={st.status}
      data-mode={st.mode ?? ''}
      data-wrong={st.beats.filter((b) => b.kind === 'wrong').length}
      data-refused={st.beats.filter((b) => b.kind === 'refused').length}
      aria-label="one reset race in slow motion"
    >
      <div className="pane-head">
        <h2>Watch one reset race, slowly</h2>
        <span className="quiet">2 CPUs, 4 stacks, one event a second each; after the reset, 4 other stacks that hash to the same slots</span>
      </div>
      <div className="sim-actions">
        <button
          type="button"
          className={st.mode === 'v7' && active ? 'primary' : undefined}
          data-testid="slow-v7"
          disabled={busy || st.status === 'starting'}
          onClick={() => void st.start('v7')}
          title="v7: 4-byte ids, no generation"
        >
          ▶ v7
        </button>
        <button
          type="button"
          className={st.mode === 'v8' && active ? 'primary' : undefined}
          data-testid="slow-v8"
          disabled={busy || st.status === 'starting'}
          onClick={() => void st.start('v8')}
          title="v8: cookies carry the generation (here with the proposed capacity parameter, so a 2,048-slot map can be reused)"
        >
          ▶ v8
        </button>
        <button
          type="button"
          data-testid="slow-pause"
          disabled={st.status !== 'running' && st.status !== 'paused'}
          onClick={() => void (st.status === 'paused' ? st.resume() : st.pause())}
        >
          {st.status === 'paused' || st.status === 'stepping' ? '▶ Resume' : '❚❚ Pause'}
        </button>
        <button
          type="button"
          data-testid="slow-step"
          disabled={st.status !== 'paused'}
          onClick={() => void st.step()}
          title="one more event, or the reset when it is due"
        >
          Step
        </button>
        <span className="quiet" data-testid="slow-status">
          {st.status === 'idle' ? 'pick v7 or v8: the first wrong id (v7) or refused cookie (v8) comes within about ten seconds' : st.status}
        </span>
      </div>
      {st.beats.length > 0 && (
        <div className="sim-slow-body">
          <ol className="sim-slow-beats" ref={listRef} aria-label="what happened, in order">
            {st.beats.map((b, i) => (
              <li key={i} data-testid="slow-beat" data-kind={b.kind} className={`beat-${b.kind}`}>
                <span className="mono quiet">{secs(b.ms)}</span> {b.kind === 'wrong' && <b className="bad-text">✗ wrong </b>}
                {b.kind === 'refused' && <b className="good-text">✓ refused </b>}
                {beatWords(b, v8)}
              </li>
            ))}
          </ol>
          {last && (
            <div className="sim-slow-pair" data-testid="slow-pair" data-kind={last.kind}>
              <p className="quiet">
                {recordOf(last, v8)} at {secs(last.ms)}: what it was written for, beside what slot {last.slot} holds now
                {last.kind === 'refused' ? ' (v8 does not give it out: the generation differs)' : ' (what v7 gives the reader)'}
              </p>
              <StackPair
                left={{ title: `written for: stack ${nameOf(last.stack)} (${secs(last.writtenMs)})`, frames: framesOf(last.stack) }}
                right={{ title: `slot ${last.slot} now: stack ${nameOf(last.other)} (${secs(last.ms)})`, frames: framesOf(last.other) }}
                testId="slow-stack-pair"
              />
            </div>
          )}
        </div>
      )}
    </section>
  );
}
