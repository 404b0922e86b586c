import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileBlob, PIECE } from './file-blob.ts';

/** Byte for byte (toEqual walks 2.6M elements one matcher step at a time). */
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0;

async function drain(b: Blob): Promise<{ bytes: Uint8Array; pieces: number }> {
  const parts: Uint8Array[] = [];
  const r = b.stream().getReader();
  for (;;) {
    const x = await r.read();
    if (x.done) break;
    parts.push(x.value);
  }
  return { bytes: new Uint8Array(Buffer.concat(parts)), pieces: parts.length };
}

/** A file of 2.5 pieces of pseudo-random bytes, and the platform's Blob of the same bytes (the second method). */
function fixture(): { path: string; bytes: Uint8Array; platform: Blob } {
  const dir = mkdtempSync(join(tmpdir(), 'file-blob-'));
  const path = join(dir, 'f');
  const bytes = new Uint8Array(Math.floor(2.5 * PIECE));
  let x = 1;
  for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
  writeFileSync(path, bytes);
  return { path, bytes, platform: new Blob([bytes]) };
}

describe('FileBlob', () => {
  it('streams, slices and reads whole as the platform Blob of the same bytes does', async () => {
    const { path, bytes, platform } = fixture();
    const f = FileBlob.of(path, statSync(path));
    expect(f.size).toBe(bytes.length);
    const all = await drain(f);
    expect(same(all.bytes, bytes)).toBe(true);
    expect(all.pieces).toBe(3);
    const cuts: [number?, number?][] = [[], [0, 10], [PIECE - 3, PIECE + 5], [-7], [-PIECE - 1, -2], [5, 2], [bytes.length + 9], [-1e9, 1e9], [PIECE]];
    for (const [a, b] of cuts) {
      const mine = f.slice(a, b);
      const theirs = platform.slice(a, b);
      expect(mine.size, `slice(${a}, ${b})`).toBe(theirs.size);
      const want = new Uint8Array(await theirs.arrayBuffer());
      expect(same(new Uint8Array(await mine.arrayBuffer()), want)).toBe(true);
      expect(same((await drain(mine)).bytes, want)).toBe(true);
      expect(same((await drain(mine.slice(1, -1))).bytes, new Uint8Array(await theirs.slice(1, -1).arrayBuffer()))).toBe(true);
    }
    expect(await f.slice(0, 64).text()).toBe(await platform.slice(0, 64).text());
  });

  it('fails with NotReadableError once the file changed since it was opened, as a browser File does', async () => {
    const { path } = fixture();
    const f = FileBlob.of(path, statSync(path));
    const r = f.stream().getReader();
    const first = await r.read();
    expect(first.value?.length).toBe(PIECE);
    appendFileSync(path, 'more');
    let error: unknown = null;
    try {
      for (;;) if ((await r.read()).done) break;
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).toBe('NotReadableError');
    await expect(f.slice(0, 1).arrayBuffer()).rejects.toMatchObject({ name: 'NotReadableError' });
    expect(readFileSync(path).length).toBe(Math.floor(2.5 * PIECE) + 4);
  });
});
