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
