import type { Selection } from '../core/query/api.ts';

/**
 * `--generation G|none`, `--range T0,T1` (trace seconds) and `--cpus 0,2`: the page's selection
 * on the command line. Returns the selection (null when no flag was given) and the arguments
 * left over, or an error message.
 */
export function parseSelectionArgs(args: string[]): { selection: Selection | null; rest: string[] } | { error: string } {
  const sel: Selection = { range: null, generation: null, cpus: null };
  let any = false;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (flag !== '--generation' && flag !== '--range' && flag !== '--cpus') {
      rest.push(a);
      continue;
    }
    const v = inline ?? args[++i];
    if (v === undefined) return { error: `${flag} needs a value` };
    any = true;
    if (flag === '--generation') {
      if (v === 'none') sel.generation = 'none';
      else if (/^\d+$/.test(v)) sel.generation = Number(v);
      else return { error: `--generation takes a number or 'none', not ${v}` };
    } else if (flag === '--range') {
      const [t0, t1] = v.split(',').map(Number);
      if (!(Number.isFinite(t0) && Number.isFinite(t1) && t0 < t1)) return { error: `--range takes T0,T1 with T0 < T1, not ${v}` };
      sel.range = [t0, t1];
    } else {
      const cpus = v.split(',').map(Number);
      if (!cpus.every((c) => Number.isInteger(c) && c >= 0)) return { error: `--cpus takes CPU numbers like 0,2, not ${v}` };
      sel.cpus = cpus;
    }
  }
  return { selection: any ? sel : null, rest };
}
