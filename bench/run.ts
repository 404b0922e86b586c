// `npm run bench`: the scoreboard. For now it runs the ingest benchmarks (bench/ingest.ts); the
// scoreboard that runs every bench script and writes bench/results.json replaces this file.
import { spawnSync } from 'node:child_process';

const r = spawnSync('npx', ['tsx', 'bench/ingest.ts', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
