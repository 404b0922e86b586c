import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadFiles, MEMBER_CAP } from './load.ts';

// Issue 34, 15: costs in proportion to the input, measured by counting what is kept (reports,
// diagnostic objects), never by time. Scaled down from the adversary's inputs.

/** A ustar archive of `n` one-byte members `m0..m(n-1)`, written here by hand (header + one block each). */
function tarOfOneByteMembers(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n * 1024 + 1024);
  const enc = new TextEncoder();
  for (let i = 0; i < n; i++) {
    const h = out.subarray(i * 1024, i * 1024 + 512);
    h.set(enc.encode(`m${i}`), 0);
    h.set(enc.encode('0000644\0'), 100);
    h.set(enc.encode('0000000\0'), 108);
    h.set(enc.encode('0000000\0'), 116);
    h.set(enc.encode('00000000001\0'), 124);
    h.set(enc.encode('00000000000\0'), 136);
    h[156] = 0x30;
    h.set(enc.encode('ustar\0'), 257);
    h.set(enc.encode('00'), 263);
    h.fill(0x20, 148, 156);
    let sum = 0;
    for (let k = 0; k < 512; k++) sum += h[k];
    h.set(enc.encode(sum.toString(8).padStart(6, '0') + '\0 '), 148);
    out[i * 1024 + 512] = 0x41 + (i % 26);
  }
  return out;
}

describe('an archive of many members no reader takes', () => {
  it(`3,000 one-byte members in a tar.gz: the first ${MEMBER_CAP} reported, the rest counted in one diagnostic`, async () => {
    const n = 3_000;
    const tar = tarOfOneByteMembers(n);
    const cap = await loadFiles([{ name: 'many.tar.gz', blob: new Blob([new Uint8Array(gzipSync(tar))]) }]);
    const members = cap.files.filter((f) => f.file.startsWith('many.tar.gz/'));
    expect(members.length).toBe(MEMBER_CAP);
    expect(members.every((f) => f.kind === 'unknown')).toBe(true);
    // diagnostic objects: at most one per member kept, and one for the rest
    expect(cap.diagnostics.length).toBeLessThanOrEqual(MEMBER_CAP + 1);
    const rest = cap.diagnostics.filter((d) => d.file === 'many.tar.gz');
    expect(rest.map((d) => d.message)).toEqual([`${n - MEMBER_CAP} more members that no reader takes (${n - MEMBER_CAP} bytes, the first many.tar.gz/m${MEMBER_CAP}), past the first ${MEMBER_CAP} reported one by one: not listed`]);
  });

  it('a tar of a few members is reported member by member as before', async () => {
    const cap = await loadFiles([{ name: 'few.tar', blob: new Blob([tarOfOneByteMembers(3) as Uint8Array<ArrayBuffer>]) }]);
    expect(cap.files.map((f) => f.file)).toEqual(['few.tar/m0', 'few.tar/m1', 'few.tar/m2']);
    expect(cap.diagnostics.some((d) => d.file === 'few.tar')).toBe(false);
  });
});
