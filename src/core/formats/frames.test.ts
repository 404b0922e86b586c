import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frameKey, noteFrameModule, simpleFrameKeyEnd } from './frames.ts';

// The range the trace reader interns without making a string (simpleFrameKeyEnd) against
// frameKey on the same printed frame: where the range is given, it is exactly the key.
describe('simpleFrameKeyEnd against frameKey', () => {
  const printed = fc
    .array(fc.constantFrom('a', 'Z', '_', '+', '0', 'x', 'f', 'F', '9', '/', ' ', '\t', '[', ']', '.', '\u00a0', 'é', '<', '>'), { maxLength: 30 })
    .map((a) => a.join(''));
  const hex = (max: number) => fc.array(fc.constantFrom(...'0123456789abcdefABCDEF'), { minLength: 1, maxLength: max }).map((a) => a.join(''));
  const framed = fc.oneof(
    printed,
    fc
      .tuple(fc.constantFrom('do_sys_open', 'a+b', '+x', 'vfs_read'), hex(6), fc.option(hex(4)), fc.constantFrom('', ' ', '  \t', ' [ext4]', 'x'))
      .map(([sym, off, size, tail]) => `${sym}+0x${off}${size === null ? '' : `/0x${size}`}${tail}`),
  );
  it('gives the key exactly or declines', () => {
    fc.assert(
      fc.property(fc.constantFrom('', ' ', '\t '), framed, (lead, body) => {
        const line = ' =>' + lead + body;
        let a = 3;
        let b = line.length;
        while (a < b && (line[a] === ' ' || line[a] === '\t')) a++;
        while (b > a && (line[b - 1] === ' ' || line[b - 1] === '\t')) b--;
        const end = simpleFrameKeyEnd(line, a, b);
        if (end >= 0) expect(line.slice(a, end)).toBe(frameKey(line.slice(3).trim()));
      }),
      { numRuns: 3000 },
    );
  });
  it('takes the common form', () => {
    const line = ' => smx_fn_021cc+0x310/0x380';
    expect(line.slice(4, simpleFrameKeyEnd(line, 4, line.length))).toBe('smx_fn_021cc+0x310');
    expect(simpleFrameKeyEnd('x+0xAB', 0, 6)).toBe(-1);
  });
});

describe('noteFrameModule', () => {
  const note = (printed: string, into = new Map<string, string>()) => (noteFrameModule(printed, 0, printed.length, into), into);
  it('notes the module of a frame as stack_trace prints one, under its function; the first kept', () => {
    expect([...note('vfs_read+0x9/0x10 [ext4]')]).toEqual([['vfs_read', 'ext4']]);
    expect([...note('e1000_intr+0x88/0x140\t[e1000]')]).toEqual([['e1000_intr', 'e1000']]);
    expect([...note('do_sys_open+0x1f/0x210')]).toEqual([]);
    expect([...note('[FTRACE TRAMPOLINE]')]).toEqual([]);
    expect([...note('sym[x]')]).toEqual([]);
    const m = note('f+0x1/0x2 [a]');
    note('f+0x3/0x4 [b]', m);
    expect([...m]).toEqual([['f', 'a']]);
  });

  it('agrees with a regular expression on any printed frame', () => {
    const printed = fc.array(fc.constantFrom('a', '_', '+', '0', 'x', '/', ' ', '\t', '[', ']', '.'), { maxLength: 24 }).map((a) => a.join(''));
    fc.assert(
      fc.property(printed, (p) => {
        const s = p.trim();
        // the function (up to a + or blank), then anything, a blank, [module] with no [ in it, at the end
        const m = s.startsWith('[') ? null : /^([^+\s]+)[\s\S]*?\s\[([^[]+)\]$/.exec(s);
        expect([...note(s)]).toEqual(m ? [[m[1], m[2]]] : []);
      }),
      { numRuns: 3000 },
    );
  });
});
