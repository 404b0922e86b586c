/**
 * A user's search text as a predicate on function names: `/regex/flags` is a regular
 * expression (an invalid one matches nothing and does not throw), anything else a
 * case-insensitive substring. '' (or blank) matches everything.
 */
export function compileMatcher(query: string): (name: string) => boolean {
  const q = query.trim();
  if (q === '') return () => true;
  const m = /^\/(.*)\/([a-z]*)$/s.exec(q);
  if (m && q.length >= 2) {
    let re: RegExp;
    try {
      // 'g' and 'y' make test() stateful: drop them
      re = new RegExp(m[1], m[2].replace(/[gy]/g, ''));
    } catch {
      return () => false;
    }
    return (name) => re.test(name);
  }
  const needle = q.toLowerCase();
  return (name) => name.toLowerCase().includes(needle);
}

/** The matcher applied once per name of a table: mask[i] = 1 when names[i] matches. */
export function matchMask(names: readonly string[], query: string): Uint8Array {
  const test = compileMatcher(query);
  const mask = new Uint8Array(names.length);
  for (let i = 0; i < names.length; i++) if (test(names[i])) mask[i] = 1;
  return mask;
}
