import type { CSSProperties } from 'react';
import { useViewStore } from '../../state/view/view-store.ts';
import type { Dropped } from '../../state/view/view-url.ts';
import { fmtInt, fmtTs } from './format.ts';

const gen = (g: number | 'none') => (g === 'none' ? 'records without a generation' : `generation ${fmtInt(g)}`);
const list = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);
const span = (r: [number, number]) => `${fmtTs(r[0])}–${fmtTs(r[1])}`;

/**
 * One line for what a link carried that the capture lacks, e.g. "the link's stack
 * 1a2b3c4d5e6f7a8b is not in this capture; dropped".
 */
export function noticeText(dropped: readonly Dropped[]): string {
  const missing: string[] = [];
  const outside: string[] = [];
  const old: string[] = [];
  let plural = false;
  for (const d of dropped) {
    // the stack first: it is what a shared link is usually about
    if (d.what === 'stack') missing.unshift(`stack ${d.hash}`);
    else if (d.what === 'generation') missing.push(gen(d.generation));
    else if (d.what === 'cpus') {
      missing.push(`${d.cpus.length > 1 ? 'CPUs' : 'CPU'} ${d.cpus.map(fmtInt).join(', ')}`);
      plural ||= d.cpus.length > 1;
    } else if (d.what === 'diff') {
      missing.push(`the diff's ${d.generations.map(gen).join(', ')}`);
    } else if (d.what === 'range') outside.push(`range ${span(d.range)}`);
    else if (d.what === 'window') outside.push(`timeline window ${span(d.window)}`);
    else
      old.push(
        d.index ? `stack ${d.value} is an internal index of some other capture, not a stack_hash` : `stack ${JSON.stringify(d.value)} is not a stack_hash`,
      );
  }
  const verb = (xs: string[], many: boolean) => (xs.length > 1 || many ? 'are' : 'is');
  const clauses: string[] = [];
  if (missing.length) clauses.push(`${list(missing)} ${verb(missing, plural)} not in this capture`);
  if (outside.length) clauses.push(`${list(outside)} ${verb(outside, false)} outside it`);
  clauses.push(...old);
  return clauses.length ? `the link's ${clauses.join('; its ')}; dropped` : '';
}

const bar: CSSProperties = {
  display: 'flex',
  alignItems: 'center',
  gap: 8,
  padding: '3px 10px 3px 16px',
  borderBottom: '1px solid var(--line)',
  borderLeft: '4px solid var(--warn)',
  background: 'var(--panel)',
  color: 'var(--fg)',
  fontSize: 13,
};
const text: CSSProperties = { flex: '1 1 auto', minWidth: 0, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' };
const close: CSSProperties = {
  border: 'none',
  background: 'none',
  color: 'var(--muted)',
  padding: '0 6px',
  fontSize: 16,
  lineHeight: 1,
  cursor: 'pointer',
  flex: 'none',
};

/** The view the URL carried did not all fit the capture: say what was dropped, until dismissed. */
export function Notice() {
  const dropped = useViewStore((v) => v.notice);
  const dismiss = useViewStore((v) => v.dismissNotice);
  const line = dropped ? noticeText(dropped) : '';
  if (!line) return null;
  return (
    <div role="status" data-testid="url-notice" style={bar} title={line}>
      <span style={text}>{line}</span>
      <button type="button" style={close} onClick={dismiss} aria-label="dismiss" title="dismiss">
        ×
      </button>
    </div>
  );
}
