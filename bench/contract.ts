// The bench scripts' output contract (bench/README.md, "The contract"): with `--json` the last
// line of stdout is one object `{"rows": Row[]}`. The scoreboard (run.ts) and the smoke test
// (smoke.test.ts) read it through parseRows, so both reject the same malformed output.

export interface Peer {
  name: string;
  value: number | null;
  unit: string;
  note?: string;
}

export interface Row {
  id: string;
  what: string;
  /** null only in a failed row the scoreboard makes for a script that gave none */
  value: number | null;
  unit: string;
  baseline?: { what: string; value: number; unit: string };
  /** value / baseline.value */
  ratio?: number;
  goal?: string;
  met?: boolean;
  peers?: Peer[];
  note?: string;
  /** set by the scoreboard: the script failed or gave no such row, and why */
  failed?: string;
  /** set by the scoreboard: the script that gave the row */
  script?: string;
}

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isStr = (x: unknown): x is string => typeof x === 'string' && x.length > 0;

/** What is wrong with one row, or null. */
export function rowProblem(r: unknown): string | null {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'not an object';
  const o = r as Record<string, unknown>;
  if (!isStr(o.id) || !KEBAB.test(o.id)) return `id ${JSON.stringify(o.id)} is not kebab-case`;
  const at = `row ${o.id}: `;
  if (!isStr(o.what)) return at + 'no "what"';
  if (!isNum(o.value)) return at + `value ${JSON.stringify(o.value)} is not a finite number`;
  if (!isStr(o.unit)) return at + 'no unit';
  if (o.baseline !== undefined) {
    const b = o.baseline as Record<string, unknown>;
    if (typeof b !== 'object' || b === null || !isStr(b.what) || !isNum(b.value) || !isStr(b.unit)) return at + 'baseline is not {what, value, unit}';
  }
  if (o.ratio !== undefined && !isNum(o.ratio)) return at + 'ratio is not a finite number';
  if (o.goal !== undefined && !isStr(o.goal)) return at + 'goal is not a string';
  if (o.met !== undefined && typeof o.met !== 'boolean') return at + 'met is not a boolean';
  if (o.note !== undefined && typeof o.note !== 'string') return at + 'note is not a string';
  if (o.peers !== undefined) {
    if (!Array.isArray(o.peers)) return at + 'peers is not an array';
    for (const p of o.peers as Record<string, unknown>[]) {
      if (typeof p !== 'object' || p === null || !isStr(p.name) || !(p.value === null || isNum(p.value)) || !isStr(p.unit))
        return at + 'a peer is not {name, value|null, unit}';
      if (p.value === null && !isStr(p.note)) return at + `peer ${p.name} has no value and no note saying why`;
    }
  }
  return null;
}

/** The rows of a script's stdout (its last non-empty line), or an Error saying what is wrong. */
export function parseRows(stdout: string): Row[] | Error {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return new Error('printed nothing');
  const last = lines[lines.length - 1];
  let o: unknown;
  try {
    o = JSON.parse(last);
  } catch {
    return new Error(`last line is not JSON: ${last.slice(0, 200)}`);
  }
  const rows = (o as { rows?: unknown })?.rows;
  if (!Array.isArray(rows)) return new Error('last line has no "rows" array');
  if (rows.length === 0) return new Error('"rows" is empty');
  const ids = new Set<string>();
  for (const r of rows) {
    const p = rowProblem(r);
    if (p) return new Error(p);
    const id = (r as Row).id;
    if (ids.has(id)) return new Error(`row id ${id} appears twice`);
    ids.add(id);
  }
  return rows as Row[];
}
