import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// Issue 34, 6: `npm install` (the README's first command) rewrote the tracked package-lock.json
// because its root entry named a bin path package.json no longer had, so a fresh clone was dirty
// after it. npm writes the lock's root entry from package.json's fields: they must agree.

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, unknown>;
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { name: string; version: string; packages: Record<string, Record<string, unknown>> };

describe('package-lock.json', () => {
  const root = lock.packages[''];
  for (const field of ['name', 'version', 'license', 'bin', 'engines', 'dependencies', 'devDependencies', 'optionalDependencies']) {
    it(`its root entry's ${field} is package.json's`, () => {
      expect(root[field], field).toEqual(pkg[field]);
    });
  }

  it('its name and version are package.json’s', () => {
    expect([lock.name, lock.version]).toEqual([pkg.name, pkg.version]);
  });

  it('holds every package package.json asks for', () => {
    const asked = Object.keys({ ...(pkg.dependencies as object), ...(pkg.devDependencies as object) });
    expect(asked.filter((name) => !lock.packages[`node_modules/${name}`])).toEqual([]);
  });
});
