import { describe, expect, it } from 'vitest';
import { LineSplitter } from './lines.ts';
import { CHUNK_SIZES } from './test-util.ts';

function split(bytes: Uint8Array, size: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l));
  if (size <= 0) s.push(bytes);
  else for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  s.end();
  return out;
}

const utf16 = (text: string, le: boolean) => {
  const out = new Uint8Array(2 + text.length * 2);
  out.set(le ? [0xff, 0xfe] : [0xfe, 0xff]);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[2 + 2 * i] = le ? c & 0xff : c >> 8;
    out[3 + 2 * i] = le ? c >> 8 : c & 0xff;
  }
  return out;
};

describe('LineSplitter', () => {
  const text = 'one\r\ntwo – ü\n\nlast';
  const want = ['one', 'two – ü', '', 'last'];
  it.each(CHUNK_SIZES)('UTF-8 with a BOM and CRLF, chunk %i', (size) => {
    expect(split(new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]), size)).toEqual(want);
  });
  it.each(CHUNK_SIZES)('UTF-16 LE and BE after their byte-order mark, chunk %i', (size) => {
    expect(split(utf16(text, true), size)).toEqual(want);
    expect(split(utf16(text, false), size)).toEqual(want);
  });
  it('a file of one byte, and an empty file', () => {
    expect(split(new Uint8Array([0x61]), 1)).toEqual(['a']);
    expect(split(new Uint8Array([]), 0)).toEqual([]);
  });
});

describe('UTF-16 files through the sniffer and a reader', () => {
  it('a UTF-16 LE trace (as some Windows tools save it) is still a trace', async () => {
    const { sniffKind } = await import('./sniff.ts');
    const trace = '# tracer: nop\n            bash-1234    [001] d..1.   100.000001: <stack_id 7 gen 2>\n';
    expect(sniffKind(utf16(trace, true))).toBe('trace_text');
    expect(sniffKind(utf16(trace, false))).toBe('trace_text');
    expect(split(utf16(trace, true), 3)[1]).toContain('<stack_id 7 gen 2>');
  });
});
