// The house rule as a test (docs/architecture.md): each layer of src/ imports only the layers it
// names below, and no file reaches itself through its imports. Perfetto's check_imports.py in
// spirit: the rules are data, the exceptions a named debt list, and a stale debt entry fails too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importSpecs, packageOf } from '../scripts/imports.ts';

const SRC = dirname(fileURLToPath(import.meta.url));

const CORE = ['core/base', 'core/formats', 'core/unpack', 'core/capture', 'core/query', 'core/export', 'core/tables', 'core/sim', 'core/whatif'];
/** What each layer may import besides itself; everything below ui, state and workers is core. */
const LAYERS: Record<string, readonly string[]> = {
  'core/base': [],
  'core/formats': ['core/base'],
  'core/unpack': ['core/base', 'core/formats'],
  'core/capture': ['core/base', 'core/formats', 'core/unpack'],
  'core/query': ['core/base', 'core/formats', 'core/capture'],
  'core/export': ['core/base', 'core/formats', 'core/capture', 'core/query'],
  'core/tables': ['core/base', 'core/formats', 'core/capture', 'core/query'],
  'core/sim': ['core/base', 'core/formats'],
  'core/whatif': ['core/base', 'core/formats', 'core/capture', 'core/sim'],
  'core/testing': CORE,
  workers: CORE,
  state: [...CORE, 'workers'],
  ui: [...CORE, 'state'],
  cli: CORE,
};

/**
 * The packages each layer may import (a scoped name or the first part of a bare one; `node:*`
 * for Node's built-ins), besides its layers: the core runs in a browser and in Node alike, so it
 * takes no UI library and no Node module, but for the files listed in NODE_FILES.
 */
const PACKAGES: Record<string, readonly string[]> = {
  'core/base': ['re2js'],
  'core/formats': ['fflate'],
  'core/unpack': ['fflate', 'fzstd', 'modern-tar'],
  'core/capture': ['re2js'],
  'core/query': [],
  'core/export': [],
  'core/tables': ['apache-arrow', 'hyparquet', 'hyparquet-writer'],
  'core/sim': [],
  'core/whatif': [],
  'core/testing': ['fast-check', 'fflate', 'fzstd', 'vitest', 'node:*'],
  workers: ['comlink', '@duckdb/duckdb-wasm'],
  state: ['react', 'zustand', 'fflate'],
  ui: ['react', 'react-dom', 'zustand', 'd3'],
  cli: ['node:*', '@duckdb/node-api', 'hyparquet-writer'],
};
/** Core files that run only in Node (worker_threads CPUs for tests and the command line), with the Node packages they take. */
const NODE_FILES: Record<string, readonly string[]> = {
  'core/sim/run-node.ts': ['node:*'],
  'core/sim/node-worker.ts': ['node:*'],
  'core/sim/node-worker-boot.mjs': ['node:*', 'tsx'],
  'core/sim/insert-race.worker.ts': ['node:*'],
};
/** Test support outside core/testing (imported only by tests): what it takes. */
const TEST_SUPPORT: Record<string, readonly string[]> = { 'cli/test-io.ts': ['vitest'] };

/** The layer of a path relative to src/ (its folder under core/, else its top folder), or null. */
function layerOf(path: string): string | null {
  const parts = path.split('/');
  const name = parts[0] === 'core' && parts.length > 2 ? `core/${parts[1]}` : parts.length > 1 ? parts[0] : null;
  return name && name in LAYERS ? name : null;
}

interface Edge {
  from: string;
  to: string;
}

/** The specifiers a module imports, types too (a type import closes a circle as well). */
const importsOf = (text: string): string[] => importSpecs(text).map((i) => i.spec);

/** Imports the rules refuse, each with the reason it is still here. Empty: keep it so. */
const DEBT: readonly { from: string; to: string; why: string }[] = [];

const isTest = (f: string) => /\.test\.tsx?$/.test(f);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'fixtures') sourceFiles(p, out);
    } else if (/\.(ts|tsx|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Every import of a file under src/ that resolves to another file under src/, as paths relative to src/. */
function graph(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const to = relative(SRC, resolve(dirname(file), spec));
      if (to.startsWith('..')) continue;
      edges.push({ from: relative(SRC, file), to });
    }
  }
  return edges;
}

/** The imports the rules refuse, as `from -> to`. Tests may reach anything, test support included. */
function refusedOf(edges: readonly Edge[]): string[] {
  const refused: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (!a || !b || a === b || isTest(from)) continue;
    if (!LAYERS[a].includes(b)) refused.push(`${from} -> ${to}`);
  }
  return refused;
}

/** Every bare import (a package) of a product file under src/, as `file -> package`. */
function packageEdges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    if (isTest(from)) continue;
    for (const spec of importsOf(readFileSync(file, 'utf8'))) if (!spec.startsWith('.') && !spec.startsWith('/')) out.push({ from, to: packageOf(spec) });
  }
  return out;
}

/** The package imports the rules refuse, as `file -> package`. */
function refusedPackages(edges: readonly Edge[]): string[] {
  const refused: string[] = [];
  for (const { from, to } of edges) {
    const layer = layerOf(from);
    if (!layer) continue;
    const allowed = [...PACKAGES[layer], ...(NODE_FILES[from] ?? []), ...(TEST_SUPPORT[from] ?? [])];
    if (!allowed.includes(to)) refused.push(`${from} -> ${to}`);
  }
  return refused;
}

/**
 * The browser's document in a core file: `document.`, `localStorage.`, `window.document` and
 * the like, an HTML element type, requestAnimationFrame, getComputedStyle (the core runs in a
 * worker and in Node, neither of which has them). A local named `window` is no DOM.
 */
const DOM_USE =
  /\b(?:document|localStorage|sessionStorage)\.\w|\bwindow\.(?:document|location|addEventListener|innerWidth|innerHeight|devicePixelRatio)\b|\bHTML\w*Element\b|\brequestAnimationFrame\(|\bgetComputedStyle\(/;
function domUses(files: readonly { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    if (!path.startsWith('core/') || path.startsWith('core/testing/') || isTest(path)) continue;
    text.split('\n').forEach((line, i) => {
      if (DOM_USE.test(line)) out.push(`${path}:${i + 1}`);
    });
  }
  return out;
}

/** The import circles among the product's files (Tarjan's strongly connected components). */
function circles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (!isTest(e.from)) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const c: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      on.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) found.push(c.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph of src/', () => {
  const edges = graph();

  it('reads the imports of the tree (a scan that found nothing would pass everything)', () => {
    // a second count: the lines of the tree that start an import or re-export from a relative path
    let lines = 0;
    for (const f of sourceFiles(SRC)) for (const l of readFileSync(f, 'utf8').split('\n')) if (/^(import|export)\b.*\bfrom '\.\.?\//.test(l)) lines++;
    expect(edges.length).toBeGreaterThanOrEqual(lines);
    expect(edges.length).toBeGreaterThan(1000);
  });

  it('puts every product file in a layer', () => {
    // core/platform.d.ts: ambient declarations of the host's web APIs for tsc -p src/core, imported by nothing
    const homeless = sourceFiles(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !isTest(f) && layerOf(f) === null && f !== 'core/platform.d.ts');
    expect(homeless).toEqual([]);
  });

  it('has no import a layer may not make, beyond the named debt', () => {
    const refused = refusedOf(edges);
    const debt = DEBT.map((d) => `${d.from} -> ${d.to}`);
    expect(refused.filter((r) => !debt.includes(r))).toEqual([]);
    expect(
      debt.filter((d) => !refused.includes(d)),
      'debt paid: take it off the list',
    ).toEqual([]);
  });

  it('imports only the packages its layer may: no UI library and no Node module in the core but its Node-only files', () => {
    const pkgs = packageEdges();
    // a second count: the product's lines importing from a bare specifier
    let lines = 0;
    for (const f of sourceFiles(SRC))
      if (!isTest(relative(SRC, f))) for (const l of readFileSync(f, 'utf8').split('\n')) if (/^(import|export)\b.*\bfrom '[^.'/]/.test(l)) lines++;
    expect(pkgs.length).toBeGreaterThanOrEqual(lines);
    expect(refusedPackages(pkgs)).toEqual([]);
  });

  it('type-checks the core without the DOM or Node (src/core/tsconfig.json) but for the Node-only files listed here', () => {
    // the JSON of the core's tsconfig, its comment lines dropped
    const json = readFileSync(join(SRC, 'core/tsconfig.json'), 'utf8')
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('//'))
      .join('\n');
    const conf = JSON.parse(json) as { compilerOptions: { lib: string[]; types: string[] }; exclude: string[] };
    expect(conf.compilerOptions.lib.some((l) => /^dom|webworker/i.test(l))).toBe(false);
    expect(conf.compilerOptions.types).toEqual([]);
    const nodeOnly = Object.keys(NODE_FILES)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice('core/'.length));
    expect(conf.exclude.filter((e) => !e.includes('*')).sort()).toEqual(nodeOnly.sort());
    expect(conf.exclude.filter((e) => e.includes('*')).sort()).toEqual(['**/*.test.ts', 'tables/**', 'testing/**']);
  });

  it('uses no DOM in the core', () => {
    expect(domUses(sourceFiles(SRC).map((f) => ({ path: relative(SRC, f), text: readFileSync(f, 'utf8') })))).toEqual([]);
  });

  it('has no import circle', () => {
    expect(circles(edges)).toEqual([]);
  });

  it('can fail: an upward import, a product import of test support and a circle, added to the graph, are caught', () => {
    const added = [
      { from: 'core/formats/sniff.ts', to: 'core/capture/ingest.ts' },
      { from: 'ui/app/App.tsx', to: 'workers/ingest-client.ts' },
      { from: 'workers/ingest.worker.ts', to: 'core/testing/fuzz.ts' },
    ];
    expect(refusedOf([...edges, ...added])).toEqual(added.map((e) => `${e.from} -> ${e.to}`));
    const loop = [
      { from: 'core/base/bytes.ts', to: 'core/base/control-chars.ts' },
      { from: 'core/base/control-chars.ts', to: 'core/base/bytes.ts' },
    ];
    expect(circles([...edges, ...loop])).toEqual([['core/base/bytes.ts', 'core/base/control-chars.ts']]);
    const pkgAdded = [
      { from: 'core/query/flame.ts', to: packageOf('react') },
      { from: 'core/capture/ingest.ts', to: packageOf('node:fs') },
      { from: 'core/export/exports.ts', to: packageOf('d3-scale/dist') },
    ];
    expect(refusedPackages([...packageEdges(), ...pkgAdded])).toEqual(pkgAdded.map((e) => `${e.from} -> ${e.to}`));
    expect(
      domUses([{ path: 'core/query/x.ts', text: 'const a = 1;\nconst w = document.createElement("canvas");\nlet window = 3; window.indexOf(1);' }]),
    ).toEqual(['core/query/x.ts:2']);
  });
});
