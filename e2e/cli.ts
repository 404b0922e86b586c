import { execFileSync } from 'node:child_process';
import type { Summary } from '../src/core/model/summary.ts';

/** Runs the command line on files and returns its JSON, for comparing with the page. */
export function cliSummary(files: string[]): Summary {
  const out = execFileSync('npx', ['tsx', 'src/cli/main.ts', 'summary', '--json', ...files], { encoding: 'utf8' });
  return JSON.parse(out) as Summary;
}
