import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { Summary } from '../src/core/capture/summary.ts';

/**
 * The command line, run as its own process: Node with tsx's loader on src/cli/main.ts. Node is
 * started directly (not through `npx tsx`, whose package lookup and second process cost a
 * second or more per call on a loaded machine); the program and its output are the same.
 */
export const CLI = [process.execPath, ['--import', 'tsx', 'src/cli/main.ts']] as const;

/** Runs the command line with these arguments and returns its stdout (throws on a non-zero exit). */
export function cli(args: string[]): string {
  return execFileSync(CLI[0], [...CLI[1], ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** The same, without blocking: several can run at once. */
export function cliAsync(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(CLI[0], [...CLI[1], ...args], { encoding: 'utf8', maxBuffer: 1 << 28 }, (err, out) => (err ? reject(err) : resolve(out))),
  );
}

/**
 * A `summary` answer depends only on its arguments and the bytes of its files: the key is both
 * (each file's content hashed, so a file rewritten in place is never answered from before).
 */
const answers = new Map<string, string>();
function summaryKey(args: string[]): string {
  const h = createHash('sha256');
  for (const a of args) {
    h.update(a).update('\0');
    if (existsSync(a) && statSync(a).isFile()) h.update(readFileSync(a)).update('\0');
  }
  return h.digest('hex');
}

/** `summary --json [extra...] FILE...`'s JSON: runs the command line once per arguments and bytes. */
export function cliSummaryJson<T = Summary>(files: string[], extra: string[] = []): T {
  const args = ['summary', '--json', ...extra, ...files];
  const key = summaryKey(args);
  let out = answers.get(key);
  if (out === undefined) answers.set(key, (out = cli(args)));
  return JSON.parse(out) as T;
}

/** Runs the command line on files and returns its JSON, for comparing with the page. */
export function cliSummary(files: string[]): Summary {
  return cliSummaryJson(files);
}

/** cliSummary of several file sets, their command lines run two at a time (the machine's cores). */
export async function cliSummaries(sets: string[][]): Promise<Summary[]> {
  const result: Summary[] = new Array(sets.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < sets.length; i = next++) {
      const args = ['summary', '--json', ...sets[i]];
      const key = summaryKey(args);
      let out = answers.get(key);
      if (out === undefined) answers.set(key, (out = await cliAsync(args)));
      result[i] = JSON.parse(out) as Summary;
    }
  };
  await Promise.all([lane(), lane()]);
  return result;
}
