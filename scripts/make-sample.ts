// Regenerates the embedded sample capture in public/samples/ from the generator in src/core/sim.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SAMPLE, generateSample } from '../src/core/sim/sample-capture.ts';
import { sampleFiles } from '../src/core/sim/sample-files.ts';

const dir = new URL('../public/samples/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
for (const f of readdirSync(dir)) rmSync(join(dir, f));
const files = sampleFiles(generateSample(DEFAULT_SAMPLE));
for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
writeFileSync(join(dir, 'index.json'), JSON.stringify({ options: DEFAULT_SAMPLE, files: [...files.keys()] }, null, 2) + '\n');
console.log(`wrote ${files.size} files to ${dir}: ${[...files.keys()].join(', ')}`);
