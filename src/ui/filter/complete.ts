/** What a filter may name beside an event's own fields (trace-cmd's and this tool's). */
export const COMMON_FIELDS = ['COMM', 'common_pid', 'CPU', 'TGID'] as const;

/** An event's fields for completion: numeric ones compare as numbers, the others as text. */
export interface FieldChoice {
  name: string;
  numeric: boolean;
}

/** A completion: the whole filter line it would make, and what kind of name it adds. */
export interface Completion {
  value: string;
  label: string;
}

const LIMIT = 50;

/**
 * What to offer for one filter line typed so far (trace-cmd's -F syntax): before the `:`, the
 * capture's event names for the name being typed (after a `,`, the next one); after it, the
 * fields of the events named there (every event's when a name is a pattern no event is
 * called), for the term being typed after the colon, `&&`, `||`, `(` or `!`. Nothing once the
 * term has its operator. Each offer is the whole line, as a datalist needs.
 */
export function complete(text: string, events: readonly string[], fieldsOf: ReadonlyMap<string, readonly FieldChoice[]>): Completion[] {
  const colon = text.indexOf(':');
  if (colon < 0) {
    const comma = text.lastIndexOf(',');
    const before = text.slice(0, comma + 1);
    const typed = text.slice(comma + 1).trimStart();
    const lead = comma >= 0 ? ' ' : '';
    const t = typed.toLowerCase();
    return events
      .filter((e) => e.toLowerCase().startsWith(t))
      .slice(0, LIMIT)
      .map((e) => ({ value: `${before.trimEnd()}${lead}${e}`, label: 'event' }));
  }
  const start = termStart(text, colon + 1);
  // inside a quoted value: nothing to name
  if (start > text.length) return [];
  const term = text.slice(start).trimStart();
  if (/[=<>!&|~+\-*/%^"'()]/.test(term) || /\s/.test(term)) return [];
  const head = text.slice(0, start);
  // a blank after the colon, && and || as trace-cmd's man page writes them; none after ( or !
  const sep = /[\s(!]$/.test(head) ? '' : ' ';
  const t = term.toLowerCase();
  const offers: Completion[] = [];
  const seen = new Set<string>();
  const offer = (name: string, label: string) => {
    if (seen.has(name) || !name.toLowerCase().startsWith(t)) return;
    seen.add(name);
    offers.push({ value: `${head}${sep}${name}`, label });
  };
  for (const f of fieldsNamed(text.slice(0, colon), fieldsOf)) offer(f.name, f.numeric ? 'number' : 'text');
  for (const c of COMMON_FIELDS) offer(c, c === 'COMM' ? 'text' : 'number');
  return offers.slice(0, LIMIT);
}

/** Where the term being typed begins: after the last `&&`, `||`, `(` or a `!` that is no `!=`/`!~`, or after the colon. */
function termStart(text: string, from: number): number {
  let start = from;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    const next = text[i + 1];
    if ((c === '&' && next === '&') || (c === '|' && next === '|')) start = ++i + 1;
    else if (c === '(') start = i + 1;
    else if (c === '!' && next !== '=' && next !== '~') start = i + 1;
    else if (c === '"' || c === "'") {
      // a quoted value: its characters are no operators
      const close = text.indexOf(c, i + 1);
      if (close < 0) return text.length + 1;
      i = close;
    }
  }
  return start;
}

/** The fields of the events an EVENTS part names: those called so (case-insensitive, SYSTEM/ dropped), or every event's when none is. */
function fieldsNamed(eventsPart: string, fieldsOf: ReadonlyMap<string, readonly FieldChoice[]>): FieldChoice[] {
  const lower = new Map([...fieldsOf].map(([e, f]) => [e.toLowerCase(), f]));
  const named: (readonly FieldChoice[])[] = [];
  for (const part of eventsPart.split(',')) {
    const name = part.trim().split('/').pop()!.toLowerCase();
    const f = lower.get(name);
    if (f) named.push(f);
  }
  const lists = named.length > 0 ? named : [...fieldsOf.values()];
  return lists.flat();
}
