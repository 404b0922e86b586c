import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { packTar } from 'modern-tar';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ingest } from './ingest.ts';
import { CaptureLoads } from './capture-loads.ts';
import { loadFiles, type LoadProgress, type NamedBlob } from './load.ts';
import { namedBlob, sampleFile } from '../testing/formats.ts';
import { summarize, type Summary } from './summary.ts';

// Each file fails alone, a file that changes while read is caught, and progress follows the
// decompressed bytes (issue 10, points 1 to 3 of what was left).

const bytesOf = sampleFile;
const TRACE = bytesOf('trace');
const STAT = bytesOf('stack_map_stat');
const BIN1 = bytesOf('stack_map_bin.gen1');
const blob = namedBlob;
const gz = (b: Uint8Array) => new Uint8Array(gzipSync(b));

/**
 * A file that the platform stops reading after `after` bytes, as Chromium and Node do with a file
 * truncated, rewritten or removed under the reader (or a folder, with `after` 0): the stream errors
 * with NotReadableError. Its size is the size it had when it was opened.
 */
class Unreadable extends Blob {
  constructor(
    private readonly content: Uint8Array,
    private readonly after: number,
  ) {
    super([content as Uint8Array<ArrayBuffer>]);
  }
  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    let at = 0;
    return new ReadableStream({
      pull: (c) => {
        if (at >= this.after) {
          c.error(new DOMException('The blob could not be read', 'NotReadableError'));
          return;
        }
        const end = Math.min(this.after, at + 4096);
        c.enqueue(this.content.slice(at, end) as Uint8Array<ArrayBuffer>);
        at = end;
      },
    });
  }
}

/** A file whose stream delivers other bytes than its size said (it grew or shrank while read, unnoticed by the platform). */
class Shifting extends Blob {
  constructor(
    atOpen: Uint8Array,
    private readonly whenRead: Uint8Array,
  ) {
    super([atOpen as Uint8Array<ArrayBuffer>]);
  }
  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return new Blob([this.whenRead as Uint8Array<ArrayBuffer>]).stream();
  }
}

const diagnosticsOf = (s: Summary, file: string) => s.diagnostics.filter((d) => d.file === file);
/** the numbers of a capture, without its file list and diagnostics */
const numbers = (s: Summary) => ({
  events: s.events,
  cookies: s.cookies,
  fullStacks: s.fullStacks,
  resolved: s.resolved,
  uniqueStacks: s.uniqueStacks,
  stat: s.stat,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('each file fails alone', () => {
  it('a file unreadable part way (NotReadableError) keeps what was read; the other files load', async () => {
    const alone = summarize(await loadFiles([blob('stack_map_stat', STAT), blob('stack_map_bin.gen1', BIN1)]));
    const cut = 200_000;
    const s = summarize(await loadFiles([blob('stack_map_stat', STAT), { name: 'trace', blob: new Unreadable(TRACE, cut) }, blob('stack_map_bin.gen1', BIN1)]));
    // the trace's first 200 KB, as a trace cut there would give
    const truncated = summarize(await loadFiles([blob('stack_map_stat', STAT), blob('trace', TRACE.subarray(0, cut)), blob('stack_map_bin.gen1', BIN1)]));
    expect(numbers(s)).toEqual(numbers(truncated));
    expect(s.events).toBeGreaterThan(0);
    expect(s.stat).toEqual(alone.stat);
    const d = diagnosticsOf(s, 'trace');
    expect(d.map((x) => x.message)).toContainEqual(
      expect.stringMatching(/^could not be read past byte 200000 of 925448 \(NotReadableError: The blob could not be read\).*what was read before is kept$/),
    );
    expect(s.files.map((f) => f.file)).toEqual(['stack_map_stat', 'trace', 'stack_map_bin.gen1']);
  });

  it('a folder (unreadable from its first byte) is a diagnostic, not a file; alone, the load is rejected naming it', async () => {
    const folder: NamedBlob = { name: 'captures', blob: new Unreadable(new Uint8Array(4096), 0) };
    const s = summarize(await loadFiles([folder, blob('stack_map_stat', STAT)]));
    expect(s.files.map((f) => f.file)).toEqual(['stack_map_stat']);
    expect(diagnosticsOf(s, 'captures').map((d) => d.message)).toEqual([
      'could not be read (NotReadableError: The blob could not be read): a folder, or a file that is gone or unreadable',
    ]);
    const loads = new CaptureLoads(() => null);
    const r = await loads.load({ id: 1, mode: 'replace', files: [folder] });
    expect(r.outcome).toBe('rejected');
    if (r.outcome !== 'rejected') return;
    expect(r.files).toEqual([]);
    expect(r.diagnostics.map((d) => d.file)).toEqual(['captures']);
  });

  it('a gzip and a tar unreadable part way keep what came before', async () => {
    const tar = await packTar([
      { header: { name: 'stack_map_stat', size: STAT.length, type: 'file' }, body: STAT },
      { header: { name: 'trace', size: TRACE.length, type: 'file' }, body: TRACE },
    ]);
    const s = summarize(
      await loadFiles([
        { name: 'b.tar', blob: new Unreadable(tar, 400_000) },
        { name: 'stat.gz', blob: new Unreadable(gz(STAT), 10) },
        blob('stack_map_bin.gen1', BIN1),
      ]),
    );
    expect(s.stat?.file).toBe('b.tar/stack_map_stat');
    expect(s.events).toBeGreaterThan(0);
    expect(s.files.map((f) => f.file)).toContain('stack_map_bin.gen1');
    for (const f of ['b.tar', 'stat.gz'])
      expect(
        diagnosticsOf(s, f)
          .map((d) => d.message)
          .join('\n'),
      ).toContain('NotReadableError');
  });

  it('a reader that throws loses only its own file, with a diagnostic naming it and the error', async () => {
    const open = Ingest.prototype.open;
    // any unexpected exception inside a parser, here on the chunk that takes the trace past 8 KB
    vi.spyOn(Ingest.prototype, 'open').mockImplementation(function (this: Ingest, file: string) {
      const p = open.call(this, file);
      if (!file.endsWith('trace')) return p;
      let n = 0;
      return {
        push: (c: Uint8Array) => {
          if ((n += c.length) > 8192) throw new RangeError('Invalid string length');
          p.push(c);
        },
        end: () => p.end(),
      };
    });
    const chunked = (name: string, b: Uint8Array): NamedBlob => ({ name, blob: new Unreadable(b, b.length + 1) });
    const without = summarize(await loadFiles([blob('stack_map_stat', STAT), blob('stack_map_bin.gen1', BIN1)]));
    const s = summarize(await loadFiles([blob('stack_map_stat', STAT), chunked('trace', TRACE), blob('stack_map_bin.gen1', BIN1)]));
    // nothing of the trace is kept: the numbers are those of the other two files
    expect(numbers(s)).toEqual(numbers(without));
    expect(s.files.map((f) => f.file)).toEqual(['stack_map_stat', 'stack_map_bin.gen1']);
    expect(diagnosticsOf(s, 'trace').map((d) => [d.where, d.message])).toEqual([
      ['offset 0x2000', 'the reader failed at byte 8192 (RangeError: Invalid string length): nothing of this file is kept'],
    ]);
    // inside a tar, the next member is still read
    const tar = await packTar([
      { header: { name: 'trace', size: TRACE.length, type: 'file' }, body: TRACE },
      { header: { name: 'stack_map_stat', size: STAT.length, type: 'file' }, body: STAT },
    ]);
    const t = summarize(await loadFiles([blob('b.tar', tar)]));
    expect(t.stat?.file).toBe('b.tar/stack_map_stat');
    expect(t.events).toBe(0);
    expect(diagnosticsOf(t, 'b.tar/trace').map((d) => d.message)).toEqual([
      expect.stringMatching(/^the reader failed at byte \d+ \(RangeError: Invalid string length\)/),
    ]);
  });
});

describe('a file that changes while it is read', () => {
  it('fewer or more bytes than it had when the load started: a diagnostic, not "understood"', async () => {
    const s = summarize(
      await loadFiles([
        { name: 'shrunk', blob: new Shifting(TRACE, TRACE.subarray(0, 100_000)) },
        { name: 'grown', blob: new Shifting(STAT, new Uint8Array([...STAT, ...STAT.subarray(0, 20)])) },
      ]),
    );
    // (the trace cut mid-line also has that line reported)
    expect(diagnosticsOf(s, 'shrunk').map((d) => d.message)).toContain(
      'changed while being read: 100000 bytes were read where it had 925448 when the load started (cut short); what was read is kept',
    );
    expect(diagnosticsOf(s, 'grown').map((d) => d.message)).toContain(
      `changed while being read: ${STAT.length + 20} bytes were read where it had ${STAT.length} when the load started (grown); what was read is kept`,
    );
  });

  it('a File whose lastModified moved, or whose last byte no longer reads, once it was read: a diagnostic', async () => {
    let reads = 0;
    /** the platform's File, modified on disk after its bytes were streamed */
    class Touched extends File {
      override get lastModified() {
        return reads > 0 ? 2000 : 1000;
      }
      override stream() {
        reads++;
        return super.stream();
      }
    }
    /** every slice of it fails to read, as a File does once it changed on disk */
    class Gone extends File {
      override slice(): Blob {
        return new (class extends Blob {
          override arrayBuffer(): Promise<ArrayBuffer> {
            return Promise.reject(new DOMException('The requested file could not be read', 'NotReadableError'));
          }
        })();
      }
    }
    const s = summarize(
      await loadFiles([
        { name: 'touched', blob: new Touched([STAT as Uint8Array<ArrayBuffer>], 'touched') },
        { name: 'gone', blob: new Gone([STAT as Uint8Array<ArrayBuffer>], 'gone') },
        { name: 'kept', blob: new File([STAT as Uint8Array<ArrayBuffer>], 'kept') },
      ]),
    );
    const said = 'changed while being read (its last byte can no longer be read as it was): what was read may mix its old and new contents';
    expect(s.diagnostics.map((d) => [d.file, d.message])).toEqual([
      ['touched', said],
      ['gone', said],
    ]);
  });

  it('what the caller can tell (the command line stats the file before and after) is a diagnostic for that file', async () => {
    const files = [blob('trace', TRACE), blob('stack_map_stat', STAT)];
    const asked: string[] = [];
    const s = summarize(
      await loadFiles(files, {
        changedSince: (f) => {
          asked.push(f.name);
          return f.name === 'trace' ? 'changed while being read (modified at 12:00:01, size 925448 -> 930000)' : null;
        },
      }),
    );
    expect(asked).toEqual(['trace', 'stack_map_stat']);
    expect(s.diagnostics.map((d) => [d.file, d.message])).toEqual([['trace', 'changed while being read (modified at 12:00:01, size 925448 -> 930000)']]);
  });

  it('a gzip with junk after it, and an unknown file read only to its sniff window, are not "changed"', async () => {
    const junk = new Uint8Array([...gz(STAT), ...new Uint8Array(30).fill(7)]);
    const noise = new Uint8Array(300_000).map((_, i) => (i * 7919 + 13) % 256);
    const s = summarize(await loadFiles([blob('stat.gz', junk), blob('noise.gz', gz(noise))]));
    expect(s.diagnostics.map((d) => d.message).join('\n')).not.toContain('changed');
  });
});

describe('progress', () => {
  const collect = async (files: NamedBlob[]) => {
    const seen: LoadProgress[] = [];
    await loadFiles(files, { onProgress: (p) => seen.push(p), progressEveryMs: 0 });
    return seen;
  };

  it('a gzip: counted by its decompressed bytes against the size its trailer gives, phase "inflating"', async () => {
    // a trace that compresses well: its compressed bytes are all read long before it is inflated
    const big = new Uint8Array(TRACE.length * 8);
    for (let i = 0; i < 8; i++) big.set(TRACE, i * TRACE.length);
    const file = gz(big);
    const seen = await collect([blob('trace.gz', file), blob('stack_map_stat', STAT)]);
    const inGz = seen.filter((p) => p.phase === 'inflating');
    expect(inGz.length).toBeGreaterThan(10);
    for (const p of inGz) {
      expect(p.inflatedTotal).toBe(big.length);
      expect(p.totalBytes).toBe(file.length + STAT.length);
      // the share shown is the decompressed share (to a byte of rounding)
      expect(Math.abs(p.bytesRead / file.length - p.inflatedBytes / big.length)).toBeLessThan(1e-5);
    }
    const half = inGz.find((p) => p.inflatedBytes >= big.length / 2)!;
    expect(half.bytesRead / half.totalBytes).toBeLessThan(0.6);
    const plain = seen.filter((p) => p.phase === 'reading');
    expect(plain.map((p) => p.file)).toEqual(expect.arrayContaining(['stack_map_stat']));
    expect(plain.every((p) => p.inflatedTotal === null && p.inflatedBytes <= STAT.length)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ bytesRead: file.length + STAT.length, totalBytes: file.length + STAT.length });
  });

  it('a multi-member gzip (its trailer gives the last member) and a zip: inflating with the size unknown', async () => {
    const two = new Uint8Array([...gz(TRACE.subarray(0, 400_000)), ...gz(TRACE)]);
    const seen = await collect([blob('two.gz', two)]);
    // known while under the trailer's size, then unknown: never a share past the file
    expect(seen.some((p) => p.inflatedTotal === TRACE.length)).toBe(true);
    expect(seen.some((p) => p.phase === 'inflating' && p.inflatedTotal === null && p.inflatedBytes > TRACE.length)).toBe(true);
    expect(seen.every((p) => p.bytesRead <= two.length)).toBe(true);
    const zip = zipSync({ trace: TRACE });
    const z = await collect([blob('t.zip', zip)]);
    expect(z.filter((p) => p.file === 't.zip/trace').every((p) => p.phase === 'inflating' && p.inflatedTotal === null)).toBe(true);
    expect(z.at(-1)).toMatchObject({ bytesRead: zip.length, totalBytes: zip.length });
  });

  it('a load says "indexing" once every byte is read, before its answer', async () => {
    const seen: LoadProgress[] = [];
    const loads = new CaptureLoads(() => seen.length);
    const r = await loads.load({ id: 1, mode: 'replace', files: [blob('trace', TRACE)] }, { onProgress: (p) => seen.push(p), progressEveryMs: 0 });
    expect(r.outcome).toBe('loaded');
    if (r.outcome !== 'loaded') return;
    // built right after the indexing report
    expect(seen[r.built - 1]).toMatchObject({ phase: 'indexing', bytesRead: TRACE.length, totalBytes: TRACE.length });
    expect(seen.slice(0, -1).every((p) => p.phase === 'reading')).toBe(true);
  });
});

// A file with no container is read straight from its Blob (an in-memory one streams as a single
// chunk, handed to the reader in 1 MiB pieces): the same capture as the bytes pushed by hand in
// small chunks, and the same as through unpack (the trace inside a tar).
describe('the direct path for plain files', () => {
  it('an in-memory Blob over 1 MiB gives what small chunks give, and what the tar of it gives', async () => {
    const big = new Uint8Array(TRACE.length * 3);
    for (let k = 0; k < 3; k++) big.set(TRACE, k * TRACE.length);
    const direct = summarize(await loadFiles([blob('trace', big), blob('stack_map_bin.gen1', BIN1)]));
    const ingest = new Ingest();
    for (const [name, bytes] of [
      ['trace', big],
      ['stack_map_bin.gen1', BIN1],
    ] as const) {
      const p = ingest.open(name);
      for (let i = 0; i < bytes.length; i += 4093) p.push(bytes.subarray(i, i + 4093));
      p.end();
    }
    const byHand = summarize(ingest.finish());
    const tar = await packTar([{ header: { name: 'trace', size: big.length, type: 'file' }, body: big }]);
    const viaTar = summarize(await loadFiles([blob('t.tar', tar), blob('stack_map_bin.gen1', BIN1)]));
    expect(direct.events).toBeGreaterThan(0);
    // the tar's member is named `t.tar/trace` wherever a file is named
    const plain = (s: Summary) => JSON.parse(JSON.stringify({ ...s, files: null }).replaceAll('"t.tar/trace"', '"trace"'));
    for (const s of [byHand, viaTar]) expect(plain(s)).toEqual(plain(direct));
    expect(direct.files.map((f) => [f.file, f.kind, f.size, f.lines])).toEqual(byHand.files.map((f) => [f.file, f.kind, f.size, f.lines]));
  });
});
