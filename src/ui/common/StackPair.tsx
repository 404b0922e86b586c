/** One side of a pair: its heading and its frames as text, leaf first. */
export interface StackSide {
  title: string;
  frames: readonly string[] | null;
}

/**
 * Two stacks in full, side by side, root rows lined up, each frame that is not the other stack's
 * frame at the same depth from the root marked: what an id was written for beside what it reads
 * as. The simulator's slow motion and stories, and the explorer's id story, draw with it.
 */
export function StackPair({ left, right, testId = 'stack-pair' }: { left: StackSide; right: StackSide; testId?: string }) {
  const depth = Math.max(left.frames?.length ?? 0, right.frames?.length ?? 0);
  // frame i from the root on both sides
  const fromRoot = (f: readonly string[] | null, i: number) => (f && i < f.length ? f[f.length - 1 - i] : undefined);
  const rows: { l?: string; r?: string; differs: boolean }[] = [];
  for (let i = depth - 1; i >= 0; i--) {
    const l = fromRoot(left.frames, i);
    const r = fromRoot(right.frames, i);
    rows.push({ l, r, differs: l !== r });
  }
  const differing = rows.filter((x) => x.differs).length;
  return (
    <table className="stack-pair mono" data-testid={testId} data-differing={differing}>
      <thead>
        <tr>
          <th>{left.title}</th>
          <th>{right.title}</th>
        </tr>
      </thead>
      <tbody>
        {left.frames === null || right.frames === null ? (
          <tr>
            <td>{left.frames === null ? 'not in any file' : ''}</td>
            <td>{right.frames === null ? 'nothing: the id resolves to no stack' : ''}</td>
          </tr>
        ) : (
          rows.map((x, i) => (
            <tr key={i} className={x.differs ? 'differs' : undefined} data-testid={x.differs ? 'stack-pair-differs' : undefined}>
              <td title={x.l}>{x.l ?? ''}</td>
              <td title={x.r}>{x.r ?? ''}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}
