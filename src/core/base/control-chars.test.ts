import { describe, expect, it } from 'vitest';
import { escapeControls, escapeLines, jsonForTerminal } from './control-chars.ts';

/** the characters no printed text may carry raw: C0, DEL, C1, the bidi controls, U+2028/9 */
const isUnsafe = (c: number) =>
  c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x061c || c === 0x200e || c === 0x200f || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);

/** a second reading of the escapes: as a JSON string (\x.. is JSON's \u00..) */
const unescape = (s: string) => JSON.parse(`"${s.replace(/"/g, '\\"').replace(/\\x/g, '\\u00')}"`) as string;

describe('escapeControls', () => {
  it('writes terminal escapes, line breaks, DEL, C1 and bidi controls as C escapes (hand-written)', () => {
    expect(escapeControls('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(escapeControls('\x1b]0;title\x07')).toBe('\\x1b]0;title\\x07');
    expect(escapeControls('over\rwrite\nline\ttab')).toBe('over\\rwrite\\nline\\ttab');
    expect(escapeControls('\x00\x08\x7f')).toBe('\\x00\\x08\\x7f');
    expect(escapeControls('\u0085\u009b2J')).toBe('\\x85\\x9b2J');
    expect(escapeControls('abc\u202edcba\u2066\u2028')).toBe('abc\\u202edcba\\u2066\\u2028');
    expect(escapeControls('C:\\x1b')).toBe('C:\\\\x1b');
    // everything else is kept: accents, CJK, emoji, NBSP, the BOM
    expect(escapeControls('é漢字😀\u00a0\ufeff')).toBe('é漢字😀\u00a0\ufeff');
    expect(escapeLines('one\x1b[2J\ntwo\r')).toBe('one\\x1b[2J\ntwo\\r');
  });

  it('every character of the BMP: none unsafe survives, and the text reads back as it was', () => {
    let all = '';
    for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) all += String.fromCharCode(c);
    const e = escapeControls(all);
    let firstUnsafe = -1;
    for (let i = 0; i < e.length && firstUnsafe < 0; i++) if (isUnsafe(e.charCodeAt(i))) firstUnsafe = e.charCodeAt(i);
    expect(firstUnsafe).toBe(-1);
    expect(unescape(e) === all).toBe(true);
    // the characters added, counted by hand per family: \t \n \r (1 each), the 29 other C0 as \xHH (3 each),
    // DEL (3), 32 C1 (3 each), the backslash (1), U+061C, U+200E/F, U+2028-202E, U+2066-2069 as \uHHHH (5 each)
    expect(e.length - all.length).toBe(3 * 1 + 29 * 3 + 3 + 32 * 3 + 1 + (1 + 2 + 7 + 4) * 5);
  });

  it('JSON for a terminal: DEL, C1 and bidi as \\u escapes, the same value parsed back', () => {
    const v = { task: '\x1b]0;t\x07', frames: ['\x7f\u009b[2J', '\u202eab'], n: 1 };
    const s = jsonForTerminal(v);
    expect(s).toBe('{"task":"\\u001b]0;t\\u0007","frames":["\\u007f\\u009b[2J","\\u202eab"],"n":1}');
    expect(JSON.parse(s)).toEqual(v);
    expect(jsonForTerminal([1, 'x'], 2)).toBe(JSON.stringify([1, 'x'], null, 2));
  });
});
