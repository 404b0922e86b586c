import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitDecl } from './format.ts';

// The regex splitDecl replaced: right on short text, quadratic on a long line.
const OLD = /^(.*?)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(\d*)\])?$/;

function old(d: string) {
  const m = OLD.exec(d);
  return m ? { type: m[1], name: m[2], array: m[3] ?? null } : null;
}

describe('splitDecl: a C declaration split from its end', () => {
  it('agrees with the regex it replaced on short declarations', () => {
    const piece = fc.constantFrom('unsigned', 'char', 'int', ' ', '\t', '*', '[', ']', '4', '16', '_x', 'a9', '9', 'const', '__data_loc', '(', ';');
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
        (d) => {
          expect(splitDecl(d)).toEqual(old(d));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('real declarations', () => {
    expect(splitDecl('unsigned long call_site')).toEqual({ type: 'unsigned long', name: 'call_site', array: null });
    expect(splitDecl('char comm[16]')).toEqual({ type: 'char', name: 'comm', array: '16' });
    expect(splitDecl('unsigned long caller[8]')).toEqual({ type: 'unsigned long', name: 'caller', array: '8' });
    expect(splitDecl('int pid ')).toEqual({ type: 'int', name: 'pid', array: null });
    expect(splitDecl('u32 buf[]')).toEqual({ type: 'u32', name: 'buf', array: '' });
    expect(splitDecl('int [4]')).toEqual({ type: '', name: 'int', array: '4' });
    expect(splitDecl('char comm[16] ')).toBeNull();
  });

  it('a 4 MB line of word characters and a bracket is one pass (the regex retried every split)', () => {
    const d = 'a'.repeat(4 << 20) + '!';
    expect(splitDecl(d)).toBeNull();
    expect(splitDecl('int ' + 'x'.repeat(4 << 20))?.name.length).toBe(4 << 20);
  });
});
