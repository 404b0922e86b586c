import { parseArgs } from 'node:util';
import { escapeLines } from '../core/base/control-chars.ts';

/** A mistake in a command's arguments: exit status 2, the message (control characters escaped), then the command's usage. */
export class UsageError extends Error {}

/**
 * A command's arguments parsed, or the exit status when there is nothing to run: 0 once the usage
 * is printed for `--help` (the parser returns 'help'), 2 once a UsageError's message and the
 * usage are printed on stderr. Any other error is the command's to report.
 */
export function parseOrExit<T>(parse: (args: string[]) => T | 'help', args: string[], usage: string): T | { exit: number } {
  let p: T | 'help';
  try {
    p = parse(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${escapeLines(e.message)}\n${usage}\n`);
    return { exit: 2 };
  }
  if (p === 'help') {
    process.stdout.write(usage + '\n');
    return { exit: 0 };
  }
  return p;
}

/** A command's options as node:util's parseArgs takes them (`--help`/`-h` is added to each). */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
type Value = string | boolean | (string | boolean)[] | undefined;

/** What parseOptions read: each option's value by name (the last one given; `multiple`: every one, in order) and the other arguments. */
export interface ParsedOptions {
  help: boolean;
  /** the value of a string option, undefined when not given */
  string(name: string): string | undefined;
  /** whether a boolean option was given */
  flag(name: string): boolean;
  /** every value of a `multiple` string option, in order */
  strings(name: string): string[];
  /** the arguments that are no option (files), those after `--` included */
  positionals: string[];
  /** every option given, in order: `--name` (its long name) and its value (undefined for a boolean) */
  given: { flag: string; value: string | undefined }[];
  /** the options (`--name`) and the other arguments as they came, in order (diff's `--before F... --after F...`) */
  sequence: ({ flag: string } | { positional: string })[];
}

/**
 * Every command's arguments through node:util's parseArgs, strict: `--opt value`, `--opt=value`,
 * `-o value`, `--` ending the options, a lone `-` as an argument (standard input), and an unknown
 * option or a missing value as a UsageError naming it.
 */
export function parseOptions(args: readonly string[], options: OptionSpec): ParsedOptions {
  let r: { values: Record<string, Value>; positionals: string[]; tokens: { kind: string; name?: string; value?: string | undefined }[] };
  try {
    r = parseArgs({
      args: [...args],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
      tokens: true,
    }) as typeof r;
  } catch (e) {
    throw new UsageError(usageMessage(e));
  }
  const { values, positionals } = r;
  const last = (name: string): Value => {
    const v = values[name];
    return Array.isArray(v) ? v[v.length - 1] : v;
  };
  return {
    help: values.help === true,
    string: (name) => {
      const v = last(name);
      return typeof v === 'string' ? v : undefined;
    },
    flag: (name) => last(name) === true,
    strings: (name) => {
      const v = values[name];
      return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
    },
    positionals,
    given: r.tokens.flatMap((t) => (t.kind === 'option' && t.name !== 'help' ? [{ flag: `--${t.name}`, value: t.value }] : [])),
    sequence: r.tokens.flatMap((t): ParsedOptions['sequence'] =>
      t.kind === 'option' ? [{ flag: `--${t.name}` }] : t.kind === 'positional' ? [{ positional: t.value! }] : [],
    ),
  };
}

/** parseArgs' error in this command line's words: `unknown option: --x`, `--limit needs a value`. */
function usageMessage(e: unknown): string {
  const code = (e as { code?: string }).code;
  const message = e instanceof Error ? e.message : String(e);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  // `--limit <value>`, `-o, --output <value>`: the long name
  const name =
    quoted
      .replace(/ <value>$/, '')
      .split(', ')
      .pop() ?? quoted;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option: ${name} (a file whose name starts with - goes after --)`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (message.includes('ambiguous')) return `${name} takes a value that starts with -: write it as ${name}=VALUE`;
    if (message.includes('does not take an argument')) return `${name} takes no value`;
    return `${name} needs a value`;
  }
  return message;
}
