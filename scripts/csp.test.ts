import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CSP } from '../vite.config.ts';

// The policy vite preview sends and the one static hosts get from public/_headers are one policy.
it('public/_headers carries the same Content-Security-Policy as vite preview', () => {
  const headers = readFileSync(new URL('../public/_headers', import.meta.url), 'utf8');
  const line = headers.split('\n').find((l) => l.trim().startsWith('Content-Security-Policy:'));
  expect(line?.trim().slice('Content-Security-Policy:'.length).trim()).toBe(CSP);
  for (const d of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"])
    expect(CSP).toContain(d);
  expect(CSP).not.toContain('unsafe-inline');
  expect(CSP).not.toContain("'unsafe-eval'");
});
