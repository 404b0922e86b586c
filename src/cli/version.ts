import { readFileSync } from 'node:fs';

/** The package's version, from its package.json (beside dist-cli/ when installed, two folders up from source). */
export function version(): string {
  const bundled = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
  try {
    return (
      (JSON.parse(readFileSync(new URL(bundled ? '../package.json' : '../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ??
      'unknown'
    );
  } catch {
    return 'unknown';
  }
}
