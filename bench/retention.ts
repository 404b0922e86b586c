// The v8 cover letter's retention experiment on the simulator: 4 CPUs, 512 KB per CPU, an
// allocation workload with a stack after every event, the map off, v7 and v8 on the same events.
// Usage: npx tsx bench/retention.ts [--out FILE]   (prints a markdown table; --out also writes it)
import { writeFileSync } from 'node:fs';
import { formatRetention, RETENTION_SCENARIOS, retentionExperiment, type RetentionResult } from '../src/core/sim/retention.ts';
import { runNode } from '../src/core/sim/run-node.ts';

async function main(): Promise<void> {
  const results: RetentionResult[] = [];
  for (const s of RETENTION_SCENARIOS) {
    process.stderr.write(`running: ${s.name}\n`);
    results.push(await retentionExperiment(s, runNode));
  }
  const notes = results.map((r) => `- ${r.scenario.name}: ${r.scenario.note}; stacks recorded in full with the map on: v7 ${r.fallbacks.v7}, v8 ${r.fallbacks.v8}`);
  const text = formatRetention(results) + '\n' + notes.join('\n') + '\n';
  process.stdout.write(text);
  const i = process.argv.indexOf('--out');
  if (i > 0 && process.argv[i + 1]) writeFileSync(process.argv[i + 1], text);
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack) + '\n');
  process.exitCode = 1;
});
