import { execFileSync } from 'node:child_process';

/**
 * The second method: awk over the raw text, with no code of ours. An event line has a `[CPU]`
 * field and then a `SECONDS.FRACTION:` field; a `<stack...>` or `<user stack...>` payload is a
 * stack record (it widens the snippet, it is not an event). The snippet rule written out again:
 * a new snippet when an event is more than 10 s before the snippet's first timestamp, or more
 * than 100 x max(span, 0.1 s) after its last. Then `sort -g` and one more awk merge the
 * snippets (of every file) whose ranges overlap or touch.
 */
const SNIPPETS_AWK = String.raw`
{
  cpu = 0; ts = ""; rec = 0
  for (i = 1; i <= NF; i++) {
    if (!cpu && $i ~ /^\[[0-9]+\]$/) { cpu = 1; continue }
    if (cpu && $i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1) + 0; rec = ($(i+1) ~ /^<(stack|user)/); break }
  }
  if (ts == "") next
  if (!rec) {
    if (n == 0) open = 1
    else if (ts < lo[n]) open = (lo[n] - ts > 10)
    else { span = hi[n] - lo[n]; if (span < 0.1) span = 0.1; open = (ts - hi[n] > 100 * span) }
    if (open) { n++; lo[n] = ts; hi[n] = ts; ev[n] = 0; rc[n] = 0 }
    ev[n]++
  }
  if (n == 0) next
  if (rec) rc[n]++
  if (ts < lo[n]) lo[n] = ts
  if (ts > hi[n]) hi[n] = ts
}
END { for (k = 1; k <= n; k++) printf "%.6f %.6f %d %d\n", lo[k], hi[k], ev[k], rc[k] }`;
const MERGE_AWK = String.raw`{ if (NR > 1 && $1 <= hi) { if ($2 > hi) hi = $2; ev += $3; rc += $4 } else { if (NR > 1) printf "%.6f %.6f %d %d\n", lo, hi, ev, rc; lo = $1; hi = $2; ev = $3; rc = $4 } }
END { if (NR) printf "%.6f %.6f %d %d\n", lo, hi, ev, rc }`;

/** [firstTs, lastTs, events, stack records] per segment, by awk (each file's snippets on their own, then merged; a record joins the snippet of the event line before it). */
export function awkSegments(paths: string[]): [string, string, number, number][] {
  const snippets = paths.map((p) => execFileSync('awk', [SNIPPETS_AWK, p], { encoding: 'utf8' })).join('');
  const merged = execFileSync('sh', ['-c', `sort -g | awk '${MERGE_AWK}'`], { input: snippets, encoding: 'utf8' });
  return merged
    .trim()
    .split('\n')
    .filter((l) => l)
    .map((l) => {
      const [a, b, n, r] = l.split(' ');
      return [a, b, Number(n), Number(r)];
    });
}
