import type { ReactNode } from 'react';

/** One moment of an id's story: its dot on the small axis (null: none) and its words. */
export interface StoryMoment {
  id: 'written' | 'reset' | 'taken' | 'read';
  /** left, as a CSS length along the axis */
  at: string | null;
  shown: boolean;
  content: ReactNode;
}

/** Where a time falls on a story's axis: the write at 4%, the latest moment at 84%, read at 92% (READ_AT). */
export function storyAxis(t0: number, tEnd: number): (t: number) => string {
  const span = Math.max(tEnd - t0, 1e-6);
  return (t) => `${4 + 80 * ((t - t0) / span)}%`;
}
export const READ_AT = '92%';

/**
 * Why is this id wrong, drawn: the story's moments as dots on a small time axis over their words,
 * each dimmed until shown. The simulator's stories (simulator/IdStories.tsx) and the explorer's
 * (idstory/IdStoryPanel.tsx) both draw with it.
 */
export function StoryMoments({ moments }: { moments: readonly StoryMoment[] }) {
  return (
    <>
      <div className="sim-story-axis" aria-hidden>
        {moments.map((m) => m.at !== null && <i key={m.id} className={`sim-story-dot ${m.id}${m.shown ? ' shown' : ''}`} style={{ left: m.at }} />)}
      </div>
      <ol className="sim-story-moments">
        {moments.map((m) => (
          <li key={m.id} data-moment={m.id} className={m.shown ? 'shown' : 'hidden'}>
            {m.content}
          </li>
        ))}
      </ol>
    </>
  );
}
