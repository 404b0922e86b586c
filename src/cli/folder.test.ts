// A capture is a folder too (issue 37, DESIGN 5.5): every command that takes FILE... reads a
// folder as the files directly in it, as the page's folder drop gives them, and a bundle (.tar,
// .tar.gz, .zip) as the files in it. The second method: the same command with the folder's files
// listed one by one (by name, as `ls` lists them), and the bundle made by tar and zip themselves.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { summarize } from '../core/capture/summary.ts';
import { exportCommand } from './export.ts';
import { generate } from './generate.ts';
import { readFiles } from './read-files.ts';
import { runCommand, spawnCli } from './test-io.ts';
import { topCommand } from './top.ts';
import { whatif } from './whatif.ts';

afterEach(() => vi.restoreAllMocks());

const SAMPLES = new URL('../../public/samples/', import.meta.url).pathname;
const cli = spawnCli;

const run = runCommand;

const base = mkdtempSync(join(tmpdir(), 'smx-folder-'));
const CAP = join(base, 'cap');
/** the folder's files one by one, in the order of their names */
const listed = (dir: string) =>
  readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));

beforeAll(async () => {
  const r = await run(generate, ['--out', CAP, '--seed', '3', '--events', '3000', '--stacks', '120', '--symbols', '300', '--text-dump']);
  expect(r.code).toBe(0);
}, 60_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('a folder as a capture', () => {
  it('summary --json of a folder is summary --json of its files listed one by one', async () => {
    const one = await cli('summary', '--json', '--segments', CAP);
    const each = await cli('summary', '--json', '--segments', ...listed(CAP));
    expect([one.code, one.err]).toEqual([0, '']);
    expect(one.out).toBe(each.out);
    const s = JSON.parse(one.out);
    expect([s.events, s.resolved, s.files.length]).toEqual([3000, 3000, 5]);
    // the page's sample folder, its index.json among its files: a note, not a failure
    const samples = await cli('summary', '--json', SAMPLES);
    expect(samples.code).toBe(0);
    expect(samples.out).toBe((await cli('summary', '--json', ...listed(SAMPLES))).out);
    const j = JSON.parse(samples.out);
    expect(j.events).toBe(4000);
    expect(j.diagnostics.map((d: { file: string }) => d.file)).toEqual(['index.json']);
  }, 60_000);

  it('a .tar.gz, a .tar and a .zip of it: the same summary, its files named inside the bundle', async () => {
    const want = JSON.parse((await cli('summary', '--json', CAP)).out);
    const tgz = join(base, 'cap.tar.gz');
    const tar = join(base, 'cap.tar');
    const zip = join(base, 'cap.zip');
    execFileSync('tar', ['czf', tgz, '-C', CAP, '.']);
    execFileSync('tar', ['cf', tar, '-C', base, 'cap']);
    let zipped = true;
    try {
      execFileSync('zip', ['-q', '-j', zip, ...listed(CAP)]);
    } catch {
      zipped = false; // no zip command here: the .tar ones still say it
    }
    for (const [bundle, inside] of [[tgz, 'cap.tar.gz/'], [tar, 'cap.tar/cap/'], ...(zipped ? [[zip, 'cap.zip/']] : [])]) {
      const r = await cli('summary', '--json', bundle);
      expect([r.code, r.err]).toEqual([0, '']);
      const s = JSON.parse(r.out.split(`"${inside}`).join('"'));
      s.files.sort((a: { file: string }, b: { file: string }) => (a.file < b.file ? -1 : 1));
      expect(s, bundle).toEqual(want);
    }
  }, 60_000);

  it('top, whatif and export take it as they take its files; export --parquet gives it the same capture_id', async () => {
    for (const [cmd, args] of [
      [topCommand, ['--json', '--limit', '50', '--weight', 'field:bytes_alloc']],
      [whatif, ['--json']],
      [exportCommand, ['--format', 'folded', '--group', 'task']],
    ] as const) {
      const one = await run(cmd, [...args, CAP]);
      const each = await run(cmd, [...args, ...listed(CAP)]);
      expect(one.code).toBe(0);
      expect(one.out.length).toBeGreaterThan(100);
      expect(one).toEqual(each);
    }
    const id = async (files: string[]) => {
      const out = join(base, `pq-${files.length}`);
      const r = await run(exportCommand, ['--format', 'parquet', '--out', out, '--json', ...files]);
      expect(r.code).toBe(0);
      return (JSON.parse(r.out) as { captureId: string }).captureId;
    };
    expect(await id([CAP])).toBe(await id(listed(CAP)));
  });

  it('sql over a folder of capture files reads them; a folder of tables stays an export folder', async () => {
    const q = 'SELECT count(*) AS n, count(DISTINCT stack_hash) AS s FROM events';
    const one = await cli('sql', '--csv', q, CAP);
    expect([one.code, one.err]).toEqual([0, '']);
    expect(one.out).toBe((await cli('sql', '--csv', q, ...listed(CAP))).out);
    const pq = join(base, 'tables');
    expect((await run(exportCommand, ['--format', 'parquet', '--out', pq, CAP])).code).toBe(0);
    expect((await cli('sql', '--csv', q, pq)).out).toBe(one.out);
    const empty = join(base, 'no-tables');
    mkdirSync(empty);
    const r = await cli('sql', q, empty);
    expect([r.code, r.err]).toEqual([
      1,
      `${empty} holds no tables (export --parquet DIR FILE... writes them) and no capture: an empty folder (no files in it)\n`,
    ]);
  }, 60_000);

  it('only the files directly in it: hidden files left out, a folder inside said and not entered; an empty one exits 1 naming it', async () => {
    const dir = join(base, 'mixed');
    mkdirSync(join(dir, 'older'), { recursive: true });
    for (const f of ['trace', 'stack_map', 'kallsyms']) copyFileSync(join(CAP, f), join(dir, f));
    copyFileSync(join(CAP, 'stack_map_bin'), join(dir, 'older', 'stack_map_bin'));
    writeFileSync(join(dir, '.DS_Store'), Buffer.from([0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31]));
    writeFileSync(join(dir, '.trace.tmp-123'), 'half a trace');
    const r = await readFiles([dir]);
    expect(summarize(r.capture).files.map((f) => f.file)).toEqual(['kallsyms', 'stack_map', 'trace']);
    expect(r.failed).toEqual([
      { file: join(dir, 'older'), reason: "a folder inside the capture's folder: not entered (a capture is the files directly in its folder)" },
    ]);
    const s = await cli('summary', '--json', dir);
    expect([s.code, s.err]).toEqual([
      0,
      `${join(dir, 'older')}: cannot read: a folder inside the capture's folder: not entered (a capture is the files directly in its folder)\n`,
    ]);
    // a folder of folders, and an empty one: nothing read, exit 1, the folder named
    const only = join(base, 'only-folders');
    mkdirSync(join(only, 'a'), { recursive: true });
    mkdirSync(join(only, 'b'));
    const empty = join(base, 'empty');
    mkdirSync(empty);
    for (const [d, why] of [
      [only, 'a folder with no files directly in it (the 2 folders in it are not entered: give them instead)'],
      [empty, 'an empty folder (no files in it)'],
    ]) {
      const t = await cli('top', d);
      expect([t.code, t.out, t.err]).toEqual([1, '', `${d}: cannot read: ${why}\nno file could be read\n`]);
    }
  }, 60_000);
});
