/**
 * An integer grouped by thousands as fmtInt groups it (`16,384`), whose text stays the plain
 * digits (`16384`): the commas are drawn by CSS (`.digit-group::before`), so the summary cells
 * read the same as every other number while their text is the plain integer DESIGN 5.2 promises.
 */
export function Digits({ value }: { value: number }) {
  if (!Number.isSafeInteger(value) || Math.abs(value) < 1000) return <>{String(value)}</>;
  const s = String(Math.abs(value));
  const head = s.length % 3 || 3;
  const groups: string[] = [];
  for (let i = head; i < s.length; i += 3) groups.push(s.slice(i, i + 3));
  return (
    <>
      {value < 0 ? '-' : ''}
      {s.slice(0, head)}
      {groups.map((g, i) => (
        <span key={i} className="digit-group">
          {g}
        </span>
      ))}
    </>
  );
}
