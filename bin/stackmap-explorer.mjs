#!/usr/bin/env node
// The package's command: the bundle in dist-cli/ (npm run build:cli makes it; npm pack runs that).
// In a clone where it has not been built, say how to build it or run it from source, instead of
// npx's bare "not found".
import { existsSync } from 'node:fs';

const bundle = new URL('../dist-cli/stackmap-explorer.mjs', import.meta.url);
if (existsSync(bundle)) await import(bundle.href);
else {
  process.stderr.write(
    'stackmap-explorer: the command line is not built in this checkout (dist-cli/ is missing).\n' +
      '  build it:            npm run build:cli\n' +
      '  or run from source:  npm run --silent cli -- summary --help\n',
  );
  process.exitCode = 1;
}
