import type { IdStoryView } from '../../core/query/id-story.ts';
import { useIdStory, useIdStoryCount, useStackFrames } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt, fmtTs } from '../common/format.ts';
import { StackPair } from '../common/StackPair.tsx';
import { READ_AT, StoryMoments, storyAxis, type StoryMoment } from '../common/StoryMoments.tsx';

/**
 * Why is this id wrong, in the explorer: a capture the simulator exported, read with its
 * ledger.json, has ids the ledger says resolve to another stack (v7) or are detected as stale
 * (v8). This panel tells one at a time on a small timeline of its moments (core/query/id-story.ts):
 * written, the reset the trace marks, the slot taken by another stack, and what the explorer
 * reads. Click a wrong id on the timeline to see its story, or step through them. Nothing shows
 * for a capture without such ids.
 */
export function IdStoryPanel() {
  const count = useIdStoryCount().data ?? 0;
  const chosen = useViewStore((s) => s.idStory);
  const set = useViewStore((s) => s.set);
  const n = count === 0 ? null : Math.min(chosen ?? 0, count - 1);
  const story = useIdStory(n).data ?? null;
  // v8's cookies are detected, never wrong
  const v8 = story?.outcome === 'detected';
  if (count === 0 || n === null) return null;
  const title = v8 ? 'Why is this cookie detected' : 'Why is this id wrong';
  return (
    <section className="panel sim-stories" aria-label={title} data-testid="explorer-id-story" data-total={count} data-index={n}>
      <div className="pane-head">
        <h2>{title}</h2>
        <span className="quiet">
          {fmtInt(count)} {v8 ? 'cookies the ledger says are detected as stale' : 'ids the ledger says resolve to another stack'}: click one on the timeline, or
          step through them.
        </span>
        <span style={{ flex: 1 }} />
        <button
          type="button"
          onClick={() => set({ idStory: Math.max(0, n - 1), pin: null })}
          disabled={n === 0}
          aria-label="previous id"
          data-testid="explorer-id-story-prev"
        >
          ◀
        </button>
        <span className="mono" data-testid="explorer-id-story-pos">
          {fmtInt(n + 1)} of {fmtInt(count)}
        </span>
        <button
          type="button"
          onClick={() => set({ idStory: Math.min(count - 1, n + 1), pin: null })}
          disabled={n >= count - 1}
          aria-label="next id"
          data-testid="explorer-id-story-next"
        >
          ▶
        </button>
      </div>
      {story && <Story s={story} v8={v8} />}
    </section>
  );
}

/** A stack in a few words: its leaf frames (the capture's stack, else the ledger's frames of the run's stack). */
function StackWords({ stack, frames: known, none }: { stack: number; frames?: readonly string[] | null; none: string }) {
  const own = useStackFrames(stack >= 0 ? stack : null).data;
  const frames = stack >= 0 ? own : known;
  if (!frames || frames.length === 0) return <>{stack >= 0 ? '…' : none}</>;
  return (
    <span className="mono" data-stack={stack}>
      {frames.slice(0, 3).join(' ← ')}
      {frames.length > 3 ? ' ← …' : ''}
    </span>
  );
}

/** The stack an id was written for (the ledger's truth) beside what the explorer reads it as (v7) or what took its slot (v8). */
function Evidence({ s, v8 }: { s: IdStoryView; v8: boolean }) {
  const read = useStackFrames(!v8 && s.read.stack >= 0 ? s.read.stack : null).data ?? null;
  const right = v8 ? (s.taken?.frames ?? null) : read;
  return (
    <StackPair
      left={{ title: `written for (ledger.json's truth)`, frames: s.written.frames }}
      right={{
        title: v8
          ? s.taken
            ? `slot ${s.written.slot} taken in generation ${s.taken.generation} by`
            : `slot ${s.written.slot} not taken again`
          : `the explorer reads it as (the dump's slot ${s.written.slot})`,
        frames: right,
      }}
      testId="explorer-story-pair"
    />
  );
}

function Story({ s, v8 }: { s: IdStoryView; v8: boolean }) {
  const set = useViewStore((st) => st.set);
  const selectStack = useViewStore((st) => st.selectStack);
  const t0 = s.written.ts;
  const tEnd = Math.max(t0, s.reset?.ts ?? t0, s.taken?.ts ?? t0);
  const x = storyAxis(t0, tEnd);
  const record = v8 ? `<stack_id ${s.written.slot} gen ${s.written.generation}>` : `<stack_id ${s.written.slot}>`;
  const zoom = () => {
    const pad = Math.max((tEnd - t0) * 0.1, 1e-4);
    set({ window: [t0 - pad, tEnd + pad], pin: { ts: s.written.ts, cpu: s.written.cpu } });
    if (s.read.stack >= 0 && useViewStore.getState().stack !== s.read.stack) selectStack(s.read.stack);
  };
  const moments: StoryMoment[] = [
    {
      id: 'written',
      at: x(t0),
      shown: true,
      content: (
        <>
          {fmtTs(s.written.ts)} s, CPU {s.written.cpu}: <code>{record}</code> written for{' '}
          <StackWords stack={s.written.stack} frames={s.written.frames} none="a stack no record here resolves to, and no ledger.json stacks table names" />
        </>
      ),
    },
    {
      id: 'reset',
      at: s.reset ? x(s.reset.ts) : null,
      shown: true,
      content: s.reset ? (
        <>
          {fmtTs(s.reset.ts)} s: the trace marks a reset (<code>stackmap reset</code>); the id stays in the ring buffer
        </>
      ) : (
        'a reset the trace does not mark'
      ),
    },
    {
      id: 'taken',
      at: s.taken ? x(s.taken.ts) : null,
      shown: true,
      content: s.taken ? (
        <>
          {fmtTs(s.taken.ts)} s, CPU {s.taken.cpu}: slot {s.written.slot} taken in generation {s.taken.generation} by{' '}
          <StackWords stack={s.taken.stack} frames={s.taken.frames} none="a stack no record here resolves to" />
        </>
      ) : (
        `slot ${s.written.slot} not named again in what the rings hold`
      ),
    },
    {
      id: 'read',
      at: READ_AT,
      shown: true,
      content: v8 ? (
        <>read: {s.read.status}: the cookie's generation does not match a dump holding the slot, so it is reported, not misresolved</>
      ) : (
        <>
          read: the dump has slot {s.written.slot} as <StackWords stack={s.read.stack} none="no stack" />, so the explorer shows it as {s.read.status}:
          plausible, and wrong
        </>
      ),
    },
  ];
  return (
    <div
      className="sim-story"
      data-testid="explorer-story"
      data-outcome={s.outcome}
      data-slot={s.written.slot}
      data-written-ts={s.written.ts}
      data-reset-ts={s.reset?.ts ?? ''}
      data-taken-ts={s.taken?.ts ?? ''}
      data-read-stack={s.read.stack}
      data-event={s.event}
    >
      <StoryMoments moments={moments} />
      <Evidence s={s} v8={v8} />
      <button
        type="button"
        onClick={zoom}
        data-testid="explorer-story-zoom"
        title="zoom the timeline from the write to the slot's next stack, and select the stack it reads as"
      >
        Show on the timeline
      </button>
    </div>
  );
}
