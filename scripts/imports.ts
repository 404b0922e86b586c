// What a module of this project imports, read from its source: the one scanner of the import
// check (src/layers.test.ts: layers, packages, circles) and of the notices check
// (e2e/dist-files.spec.ts: the packages the page reaches). The text is the project's own source,
// so a scan of the quoted strings after those words is enough.

/** One specifier a module names, and whether only types come through it (erased at build). */
export interface ImportSpec {
  spec: string;
  typeOnly: boolean;
}

/**
 * The specifiers a module imports: static imports and re-exports (`import type` / `export type`
 * marked typeOnly), side-effect imports, `import()` (typeOnly where a type is taken from it:
 * `import('./x.ts').Name`), and worker URLs (`new URL('./x.ts', import.meta.url)`).
 */
export function importSpecs(text: string): ImportSpec[] {
  const out: ImportSpec[] = [];
  for (const m of text.matchAll(/^\s*(import|export)(\s+type\b)?\b[^;]*?\bfrom\s*'([^']+)'/gm)) out.push({ spec: m[3], typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(/^\s*import\s*'([^']+)'/gm)) out.push({ spec: m[1], typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)(\.[A-Z])?/g)) out.push({ spec: m[1], typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(/\bnew URL\(\s*'([^']+)'\s*,\s*import\.meta\.url/g)) out.push({ spec: m[1], typeOnly: false });
  return out;
}

/** A bare specifier's package: `@scope/name`, `name`, or `node:*`; a query (`?url`) dropped. */
export function packageOf(spec: string): string {
  const s = spec.split('?')[0];
  if (s.startsWith('node:')) return 'node:*';
  const parts = s.split('/');
  return s.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
