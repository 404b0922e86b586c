import { describe, expect, it } from 'vitest';
import { bprintText, formatBinary, parsePrintkFormats } from './printk.ts';

// Expected texts are written out by hand from C printf rules and the kernel's vbin_printf
// packing (lib/vsprintf.c: integers aligned to their size, 8-byte ones to 4, %c one byte, %s
// inline with its NUL, `*` an int); the random formats are in trace-dat-write.test.ts, where
// trace-cmd report is the second method.

/** Packs little-endian words and bytes as the test spells them. */
function pack(parts: (['u8' | 'u16' | 'u32' | 'u64', number | bigint] | ['str', string])[]): Uint8Array {
  const out: number[] = [];
  for (const [k, v] of parts) {
    if (k === 'str') {
      out.push(...new TextEncoder().encode(v as string), 0);
      continue;
    }
    const size = k === 'u8' ? 1 : k === 'u16' ? 2 : k === 'u32' ? 4 : 8;
    while (out.length % Math.min(size, 4)) out.push(0);
    let x = BigInt(v);
    for (let i = 0; i < size; i++, x >>= 8n) out.push(Number(x & 0xffn));
  }
  return new Uint8Array(out);
}

const noSym = () => null;

describe('bprint: formats and arguments', () => {
  it('integers of every length, widths, zero padding, precision, %%', () => {
    const buf = pack([
      ['u32', -5 >>> 0],
      ['u32', 42],
      ['u32', 255],
      ['u64', 2n ** 63n + 1n],
      ['u64', -(2n ** 40n) & (2n ** 64n - 1n)],
      ['u32', 7],
      ['u32', 3],
    ]);
    expect(formatBinary('%d|%5u|%08x|%llu|%lld|%.3d|%#o|%%', buf, true, 8, noSym)).toBe('-5|   42|000000ff|9223372036854775809|-1099511627776|007|03|%');
  });

  it('%c is one byte, %hd two, %hhu one; `*` takes an int for the width', () => {
    const buf = pack([
      ['u8', 0x41],
      ['u16', 0xfffe],
      ['u8', 200],
      ['u32', 6],
      ['u32', 9],
    ]);
    expect(formatBinary('%c|%hd|%hhu|%*d|', buf, true, 4, noSym)).toBe('A|-2|200|     9|');
  });

  it('%s inline, with width and precision; %-5s left; 8-byte values aligned to 4 after a string', () => {
    const buf = pack([
      ['str', 'abc'],
      ['u64', 0x1122334455n],
      ['str', 'hello'],
      ['str', 'x'],
    ]);
    expect(formatBinary('[%s][%llx][%.3s][%-5s]', buf, true, 8, noSym)).toBe('[abc][1122334455][hel][x    ]');
  });

  it('%p is a long shown as hex; %pS / %ps through the symbol table; %pM-style pointers were rendered by the kernel', () => {
    const buf = pack([
      ['u64', 0xffffffff81000104n],
      ['u64', 0xffffffff81000104n],
      ['u64', 0xffffffff81000104n],
      ['str', '00:11:22:33:44:55'],
    ]);
    const sym = (hi: number, lo: number, off: boolean) => (hi === 0xffffffff && lo === 0x81000104 ? (off ? 'do_work+0x4' : 'do_work') : null);
    expect(formatBinary('%p %pS %ps %pM', buf, true, 8, sym)).toBe('0xffffffff81000104 do_work+0x4 do_work 00:11:22:33:44:55');
  });

  it('big endian, a 4-byte kernel long', () => {
    const b = new Uint8Array([0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
    expect(formatBinary('%ld %lu %llu', b, false, 4, noSym)).toBe('-2 1 2');
  });

  it('arguments past the record print as `?`', () => {
    expect(formatBinary('%d %s %llu', new Uint8Array([1, 0, 0, 0]), true, 8, noSym)).toBe('1 ? ?');
  });

  it('the text: `ip: formatted`, one trailing newline dropped; a missing format said as trace-cmd says it', () => {
    expect(bprintText('do_work', 'n=%d\n', 'c0', pack([['u32', 3]]), true, 8, noSym)).toBe('do_work: n=3');
    expect(bprintText('0xc044504c', undefined, 'c0891100', new Uint8Array(0), true, 4, noSym)).toBe('0xc044504c: (NO FORMAT FOUND at c0891100)');
  });
});

describe('printk_formats', () => {
  it("addresses in lowercase hex, the kernel's escapes undone, bad lines counted", () => {
    const m = new Map<string, string>();
    const bad = parsePrintkFormats('0xC0891100 : "cpu=%u\\n"\n0xc0000001 : "say \\"hi\\"\\tnow"\nnot a format\n', m);
    expect([...m]).toEqual([
      ['c0891100', 'cpu=%u\n'],
      ['c0000001', 'say "hi"\tnow'],
    ]);
    expect(bad).toBe(1);
  });
});
