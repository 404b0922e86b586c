import { useEffect, useState } from 'react';
import type { IdStory } from '../../core/sim/provenance.ts';
import { simSession } from '../../state/sim/sim-session.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { fmtInt } from '../common/format.ts';
import { LedgerCells } from './LivePanels.tsx';
import { StackPair } from '../common/StackPair.tsx';
import { READ_AT, StoryMoments, storyAxis, type StoryMoment } from '../common/StoryMoments.tsx';

/** ms between the moments of a story as it plays (human speed) */
const STEP_MS = 900;
const MOMENTS = 4;

/**
 * Why is this id wrong: once a run has ended, each wrong (v4/v7) or detected (v8) id with its
 * story as the simulation knows it and no file holds (core/sim/provenance.ts): written for one
 * stack, its slot emptied by a reset, taken by another stack, and what a reader then gets. The
 * first one plays when the run ends, a moment at a time; any other is one click away.
 */
export function IdStories() {
  const stories = useSimStore((s) => s.stories);
  const ledger = useSimStore((s) => s.ledger?.counts ?? null);
  const mode = useSimStore((s) => s.report?.mode ?? s.settings.mode);
  const runId = useSimStore((s) => s.runId);
  const focus = useSimStore((s) => s.storyFocus);
  const [chosen, setChosen] = useState(0);
  const [step, setStep] = useState(0);
  // a new run's stories: the first one plays (v8: the first whose slot another stack took, so it contrasts with something)
  useEffect(() => {
    const reused = stories?.list.findIndex((x) => x.kind === 'cookie' && x.takenBy !== null) ?? -1;
    setChosen(Math.max(0, reused));
    setStep(0);
  }, [stories]);
  // a slot clicked in the grid: the first story of an id naming it plays
  useEffect(() => {
    if (!focus || !stories) return;
    const i = stories.list.findIndex((x) => x.slot === focus.slot);
    if (i < 0) return;
    setChosen(i);
    setStep(0);
  }, [focus]);
  useEffect(() => {
    if (!stories || stories.list.length === 0 || step >= MOMENTS) return;
    const t = setTimeout(() => setStep((n) => n + 1), STEP_MS);
    return () => clearTimeout(t);
  }, [stories, step, chosen]);
  if (!stories) return null;
  const v8 = mode === 'v8';
  const title = v8 ? 'Why a cookie is detected' : 'Why is this id wrong';
  if (stories.list.length === 0)
    return (
      <section className="panel sim-stories" aria-label={title} data-testid="sim-stories" data-total={0}>
        <h2>{title}</h2>
        <p className="quiet">
          No id in this run {v8 ? 'was detected as stale' : 'resolves to another stack'}: every one left in the ring buffers reads as the stack it was written
          for.
        </p>
      </section>
    );
  const s = stories.list[Math.min(chosen, stories.list.length - 1)];
  return (
    <section className="panel sim-stories" aria-label={title} data-testid="sim-stories" data-total={stories.total} key={runId}>
      <div className="pane-head">
        <h2>{title}</h2>
        <span className="quiet">
          {fmtInt(stories.total)} {v8 ? 'cookies detected' : 'ids read as another stack'}
          {stories.total > stories.list.length ? `; the first ${fmtInt(stories.list.length)} listed` : ''}. The simulation knows what no file holds.
        </span>
      </div>
      {ledger && (
        // the ledger's verdict beside the story, so both are in view when a guided run ends
        <div className="sim-stories-ledger" data-testid="sim-stories-ledger">
          <p className="quiet mono">
            ledger: {fmtInt(ledger.ids)} {v8 ? 'cookies' : 'ids'} left in the rings, {fmtInt(ledger.full)} full stacks{' '}
            <a
              href="#sim-ledger"
              onClick={(e) => {
                e.preventDefault();
                document.querySelector('[data-testid="sim-ledger"]')?.scrollIntoView({ block: 'center' });
              }}
            >
              the ledger ↓
            </a>
          </p>
          <LedgerCells counts={ledger} mode={mode} where="stories" />
        </div>
      )}
      <div className="sim-stories-body">
        <ol className="sim-story-list mono" aria-label="ids">
          {stories.list.map((x, i) => (
            <li key={x.record}>
              <button
                type="button"
                data-testid="sim-story-item"
                data-record={x.record}
                data-slot={x.slot}
                aria-pressed={i === chosen}
                onClick={() => {
                  setChosen(i);
                  setStep(MOMENTS);
                }}
              >
                {x.kind === 'cookie' ? `gen ${x.written.generation} slot ${x.slot}` : `id ${x.slot}`} · CPU {x.written.cpu} · {x.written.ts.toFixed(6)} s ·{' '}
                {leafOf(x.written.stack)}
              </button>
            </li>
          ))}
        </ol>
        <Story s={s} step={step} v8={v8} onReplay={() => setStep(0)} />
      </div>
    </section>
  );
}

/** A stack's frames as the run's kernel prints them, leaf first (null: none). */
function framesOf(stack: number | null): string[] | null {
  const pop = simSession()?.sim.population;
  const ips = stack === null ? undefined : pop?.ips[stack];
  return pop && ips ? Array.from(ips, (ip) => pop.kernel.printFrame(ip)) : null;
}

/** A stack in a few words: its leaf frames, as the population symbolizes them. */
function stackWords(stack: number | null): string {
  const frames = framesOf(stack);
  if (!frames) return 'none';
  return `${frames.slice(0, 3).join(' ← ')}${frames.length > 3 ? ' ← …' : ''}`;
}

/** The leaf function of a stack, to tell the listed ids apart. */
const leafOf = (stack: number) => framesOf(stack)?.[0]?.split('+')[0] ?? '';

function Story({ s, step, v8, onReplay }: { s: IdStory; step: number; v8: boolean; onReplay: () => void }) {
  const t0 = s.written.ts;
  const tEnd = Math.max(t0, s.reset?.ts ?? t0, s.takenBy?.ts ?? t0);
  const x = storyAxis(t0, tEnd);
  const record = s.kind === 'cookie' ? `<stack_id ${s.slot} gen ${s.written.generation}>` : `<stack_id ${s.slot}>`;
  const moments: { at: string; what: string; id: StoryMoment['id'] }[] = [
    { id: 'written', at: x(t0), what: `${s.written.ts.toFixed(6)} s, CPU ${s.written.cpu}: ${record} written for ${stackWords(s.written.stack)}` },
    {
      id: 'reset',
      at: x(s.reset?.ts ?? (t0 + tEnd) / 2),
      what: s.reset
        ? `${s.reset.ts === null ? 'a reset (echo 0 > stack_map; its time was not recorded: a live run\u2019s Reset, or a CPU\u2019s)' : `${s.reset.ts.toFixed(6)} s: echo 0 > stack_map`} empties the map${v8 ? `: generation ${s.reset.generation} begins` : ''}; the id stays in the ring buffer`
        : 'no reset after it',
    },
    {
      id: 'taken',
      at: x(s.takenBy?.ts ?? tEnd),
      what: s.takenBy
        ? `${s.takenBy.ts.toFixed(6)} s, CPU ${s.takenBy.cpu}: slot ${s.slot} taken by ${stackWords(s.takenBy.stack)}${v8 ? ` in generation ${s.takenBy.generation}` : ''}`
        : `slot ${s.slot} not taken again in what the rings hold`,
    },
    {
      id: 'read',
      at: READ_AT,
      what: v8
        ? `read: ${s.read.status === 'no-dump' ? `no dump of generation ${s.written.generation}` : `generation ${s.written.generation}'s dump lacks slot ${s.slot}`}, so the cookie is reported as unresolvable, not misresolved`
        : `read: the last stack_map has slot ${s.slot} as ${stackWords(s.read.stack)}, so the id reads as that stack, plausibly and wrongly; the id cannot tell, though its event's call_site often can (the explorer marks such ids contradicted)`,
    },
  ];
  return (
    <div
      className="sim-story"
      data-testid="sim-story"
      data-step={step}
      data-slot={s.slot}
      data-outcome={s.outcome}
      data-written-stack={s.written.stack}
      data-taken-stack={s.takenBy?.stack ?? ''}
      data-read-stack={s.read.stack ?? ''}
    >
      <StoryMoments moments={moments.map((m, i) => ({ id: m.id, at: m.at, shown: i < step, content: m.what }))} />
      <StackPair
        left={{ title: `written for (${s.written.ts.toFixed(6)} s)`, frames: framesOf(s.written.stack) }}
        right={
          v8
            ? {
                title: s.takenBy
                  ? `slot ${s.slot} taken by (${s.takenBy.ts.toFixed(6)} s, generation ${s.takenBy.generation})`
                  : `slot ${s.slot} not taken again`,
                frames: framesOf(s.takenBy?.stack ?? null),
              }
            : { title: `a reader gets (the last stack_map's slot ${s.slot})`, frames: framesOf(s.read.stack) }
        }
        testId="sim-story-pair"
      />
      <button type="button" onClick={onReplay} disabled={step < MOMENTS}>
        Replay
      </button>
    </div>
  );
}
