import { EventFilter, FilterError } from '../core/capture/event-filter.ts';
import type { OptionSpec, ParsedOptions } from './usage.ts';

/** `--filter EXPR`, repeatable (ORed, as trace-cmd's several `-F`). */
export const FILTER_OPTIONS: OptionSpec = { filter: { type: 'string', multiple: true } };

/** The usage line of `--filter`, the same in every command that takes it. */
export const FILTER_USAGE = `  --filter EXPR
            only the events trace-cmd report -F EXPR prints (its syntax: EVENTS[:FILTER],
            EVENTS SYSTEM/EVENT, SYSTEM or EVENT, regular expressions, joined by ','; FILTER
            FIELD OP VALUE joined by && || ! ( ), OP == != >= <= > < & | ^ + - * / % =~ !~,
            FIELD an event field, COMM, common_pid, CPU or TGID), with their stack records;
            repeated, an event any of them matches`;

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
