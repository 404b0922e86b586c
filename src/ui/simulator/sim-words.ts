/**
 * How the pane speaks of generations, in each mode's own words. v8 cookies carry a generation
 * (`gen << 32 | slot`), so v8 says "generation G". v4 and v7 ids have none in their ABI; the
 * simulation keeps one only as its truth (generation = resets + 1), and these modes speak of
 * resets instead.
 */

/** The resets before a generation (generations start at 1; each reset bumps it). */
export const resetsBefore = (generation: number) => Math.max(0, generation - 1);

/** When a slot was filled, or a record written: "in generation G" (v8), "since reset N" / "before any reset" (v4/v7). */
export function fillWords(v8: boolean, generation: number): string {
  if (v8) return `in generation ${generation}`;
  const n = resetsBefore(generation);
  return n === 0 ? 'before any reset' : `since reset ${n}`;
}

/** A generation as a short tag: "gen G" (v8), "since reset N" / "before any reset" (v4/v7). */
export const genTag = (v8: boolean, generation: number) => (v8 ? `gen ${generation}` : fillWords(false, generation));
