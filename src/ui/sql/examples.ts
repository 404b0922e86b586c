/**
 * The SQL pane's example queries, over the tables of core/tables/schema.ts and the views that
 * follow the selection (`selection` over events, `selection_records` over records).
 */
export interface SqlExample {
  id: string;
  label: string;
  sql: string;
}

export const EXAMPLES: readonly SqlExample[] = [
  {
    id: 'top-stacks',
    label: 'Top stacks',
    sql: `-- stacks by occurrences in the selection, as the top stacks pane counts them
-- (resolved and unverified cookies, full stacks)
SELECT r.stack_hash, count(*) AS occurrences, any_value(s.depth) AS depth, any_value(s.leaf) AS leaf
FROM selection_records r JOIN stacks s USING (stack_hash)
GROUP BY r.stack_hash
ORDER BY occurrences DESC, r.stack_hash
LIMIT 50`,
  },
  {
    id: 'top-stacks-per-task',
    label: 'Top stacks per task',
    sql: `-- each task's three busiest stacks in the selection
SELECT task, stack_hash, count(*) AS occurrences
FROM selection_records
WHERE stack_hash IS NOT NULL
GROUP BY task, stack_hash
QUALIFY row_number() OVER (PARTITION BY task ORDER BY count(*) DESC, stack_hash) <= 3
ORDER BY task, occurrences DESC`,
  },
  {
    id: 'allocations-per-generation',
    label: 'Allocations per generation',
    sql: `-- allocation events (kmalloc, kmem_cache_alloc, mm_page_alloc, ...) per generation
SELECT generation, event, count(*) AS events, count(stack_hash) AS with_stack
FROM selection
WHERE event ILIKE '%alloc%'
GROUP BY generation, event
ORDER BY generation NULLS FIRST, events DESC`,
  },
  {
    id: 'unresolved',
    label: 'Unresolved cookies, and why',
    sql: `-- cookies that did not resolve, by generation and status
SELECT generation, status,
  CASE status
    WHEN 'no-dump' THEN 'no dump of this generation was loaded'
    WHEN 'no-slot' THEN 'the dump lacks the slot (inserted after the dump was read)'
    WHEN 'ambiguous' THEN 'generation-less dumps disagree on the slot'
  END AS why,
  count(*) AS cookies
FROM selection_records
WHERE kind IN ('cookie-v7', 'cookie-v8') AND status NOT IN ('resolved', 'unverified')
GROUP BY ALL
ORDER BY generation NULLS FIRST, cookies DESC`,
  },
  {
    id: 'busiest-frames',
    label: 'Frames of the busiest stack',
    sql: `-- the busiest stack of the selection, frame by frame (0 = leaf)
SELECT depth, frame, symbol, "offset"
FROM frames
WHERE stack_hash = (
  SELECT stack_hash FROM selection_records WHERE stack_hash IS NOT NULL
  GROUP BY stack_hash ORDER BY count(*) DESC, stack_hash LIMIT 1)
ORDER BY depth`,
  },
  {
    id: 'files',
    label: 'Files and diagnostics',
    sql: `-- every file given, what it was read as, and what was not understood in it
SELECT f.file, f.kind, f.size, f.lines_used, f.lines_unused, coalesce(sum(d.count), 0) AS diagnostics
FROM files f LEFT JOIN diagnostics d ON d.file = f.file
GROUP BY ALL
ORDER BY f.file`,
  },
];
