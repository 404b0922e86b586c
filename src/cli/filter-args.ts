import { EventFilter } from '../core/capture/event-filter.ts';
import { FilterError } from '../core/capture/event-filter-parse.ts';
import type { OptionSpec, ParsedOptions } from './usage.ts';

/** `--filter EXPR`, repeatable (ORed, as trace-cmd's several `-F`). */
export const FILTER_OPTIONS: OptionSpec = { filter: { type: 'string', multiple: true } };

const HELP = [
  'only the events `trace-cmd report -F EXPR` prints, and their stack records;',
  'EXPR is EVENTS[:FILTER], EVENTS SYSTEM/EVENT, SYSTEM or EVENT (regular',
  "expressions) joined by ','; FILTER FIELD OP VALUE joined by && || ! ( ); OP",
  '== != >= <= > < & | ^ + - * / % =~ !~; FIELD an event field, COMM,',
  'common_pid, CPU or TGID. Repeated: the events any one of them matches',
];

/** `--filter`'s help with its text from column `col` (the first line beside the option when it fits). */
export function filterHelp(col: number): string {
  const head = '  --filter EXPR';
  const first = head.length < col ? head.padEnd(col) + HELP[0] : head + '\n' + ' '.repeat(col) + HELP[0];
  return [first, ...HELP.slice(1).map((l) => ' '.repeat(col) + l)].join('\n');
}

/** The usage lines of `--filter` in summary's layout (the text on the lines below the option). */
export const FILTER_USAGE = filterHelp(12);

/**
 * The filters given (undefined for none), parsed before any file is read; `error`: the message
 * of the first that does not parse, naming its column (and the filter, when there are several).
 */
export function filterOf(o: ParsedOptions): { filter: EventFilter | undefined } | { error: string } {
  const texts = o.strings('filter');
  if (texts.length === 0) return { filter: undefined };
  try {
    return { filter: EventFilter.parse(texts) };
  } catch (e) {
    if (!(e instanceof FilterError)) throw e;
    return { error: texts.length > 1 ? `${e.message} (in --filter ${JSON.stringify(e.text)})` : e.message };
  }
}
