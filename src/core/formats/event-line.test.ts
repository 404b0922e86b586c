import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchEventLine, matchLatencyLine } from './event-line.ts';
import { frameKey } from './frames.ts';

// The linear scanners against the regexes they replace (the plain way, fine on short strings):
// same match or not, same groups, on lines generated from the characters that matter.

const EVENT_RE = /^\s*(.*?)-(\d+)\s+(?:\(\s*(-+|\d+)\)\s+)?\[(\d+)\]\s+(?:(\S{4,5})\s+)?(\d+\.\d+):(?:\s+|$)(.*)$/;
const LATENCY_RE = /^\s*(.*?)-(\d+)\s+(\d+)(\S{4,5})\s+(\d+(?:\.\d+)?)us[!#$@*+ ]?:(?:\s+|$)(.*)$/;
const SYM_OFF = /^(.+?)\+(0x[0-9a-fA-F]+)(?:\/0x[0-9a-fA-F]+)?(?:\s+\[[^\]]+\])?$/;
const SYM_ADDR = /^(.+?)\s+[<(](?:0x)?[0-9a-fA-F]+[>)]$/;
const BARE_ADDR = /^(?:0x)?([0-9a-fA-F]{8,16})$/;
const SYM_MODULE = /^(\S+)\s+\[[^\]]+\]$/;

function frameKeyByRegex(printed: string): string {
  const s = printed.trim();
  if (s.charCodeAt(0) === 91) return s;
  let m = SYM_OFF.exec(s);
  if (m) return m[1] + '+' + m[2].toLowerCase();
  m = SYM_ADDR.exec(s);
  if (m) return frameKeyByRegex(m[1]);
  m = BARE_ADDR.exec(s);
  if (m && (s.startsWith('0x') || s.length === 16)) return '0x' + m[1].toLowerCase().replace(/^0+(?=.)/, '');
  m = SYM_MODULE.exec(s);
  if (m) return m[1];
  return s;
}

const line = (chars: string[], max = 48) => fc.array(fc.constantFrom(...chars), { maxLength: max }).map((a) => a.join(''));
/** pieces that make real event lines likely, mixed with stray characters */
const piece = fc.constantFrom(
  ' ',
  '  ',
  '\t',
  '\u00a0',
  '\r',
  '\u2028',
  '-',
  '-12',
  '-7 ',
  'bash',
  'a-b',
  '(',
  ')',
  '(123)',
  '(-----)',
  '[',
  ']',
  '[001]',
  '[3]',
  'd..1',
  'dNh2.',
  '...',
  '12.345678:',
  '5.0:',
  '1.',
  ':',
  ' x',
  '0',
  '9',
  '259us',
  'us',
  '+:',
  '!:',
  '2d..1',
);
const noise = fc.array(piece, { maxLength: 4 }).map((a) => a.join(''));
/** a part of a real line, or noise in its place (one time in 13) */
const part = (...real: string[]) => fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: noise });
const ws = part(' ', '  ', '\t', ' \u00a0', '');
/** EVENT- and LATENCY-shaped lines, each part sometimes replaced by noise */
const eventish = fc
  .tuple(
    ws,
    part('bash', 'kworker/u16:2', 'jbd2/xvda1-8', '<idle>', 'a b', 'x-1', ''),
    part('-', '-'),
    part('1994', '0', '12'),
    ws,
    fc.oneof(part('(123) ', '(-----) ', '( 7) ', ''), fc.constant('')),
    fc.oneof(part('[001]', '[3]'), part('1dN.2', '0d..1', '12345', '2....')),
    ws,
    part('d..1 ', 'dNh2. ', '', '....  '),
    part('123.456789', '5.0', '83us', '259us+', '1.5us!', '7us'),
    part(':', ': ', ':  ', ':\t'),
    part('<stack_id 42>', 'payload x', '', ' tail\r', 'a\u2028b'),
  )
  .map((a) => a.join(''));

describe('matchEventLine / matchLatencyLine equal the regexes', () => {
  it('EVENT', () => {
    fc.assert(
      fc.property(fc.oneof(eventish, line([' ', '-', '1', '[', ']', '.', ':', 'a', '\u00a0', '(', ')'])), (s) => {
        const m = EVENT_RE.exec(s);
        const r = matchEventLine(s);
        if (!m) {
          expect(r).toBeNull();
          return;
        }
        expect(r).not.toBeNull();
        expect([r!.comm, r!.pid, r!.tgid ?? undefined, r!.cpu, r!.flags || undefined, r!.time, s.slice(r!.payload)]).toEqual([
          m[1].trimStart(),
          +m[2],
          m[3],
          +m[4],
          m[5],
          m[6],
          m[7],
        ]);
      }),
      { numRuns: 20000 },
    );
  });

  it('LATENCY', () => {
    fc.assert(
      fc.property(fc.oneof(eventish, line([' ', '-', '1', '2', 'd', '.', 'u', 's', ':', '+', 'x', '\t'])), (s) => {
        const m = LATENCY_RE.exec(s);
        const r = matchLatencyLine(s);
        if (!m) {
          expect(r).toBeNull();
          return;
        }
        expect(r).not.toBeNull();
        expect([r!.comm, r!.pid, r!.cpu, r!.flags, r!.time, s.slice(r!.payload)]).toEqual([m[1].trimStart(), +m[2], +m[3], m[4], m[5], m[6]]);
      }),
      { numRuns: 20000 },
    );
  });

  it('real lines', () => {
    for (const s of [
      '          <idle>-0       [001] d.h.. 123.456789: <stack_id 42 gen 3>',
      ' jbd2/xvda1-8-175   [000] ....  4543.155541: block_rq_issue: 202,1',
      '   kworker/u16:2-12345 (  12345) [003] .... 100.000001: foo',
      '       bash-1994    1dN.2   83us : _raw_spin_lock <-down_write',
    ]) {
      const m = EVENT_RE.exec(s) ?? LATENCY_RE.exec(s);
      expect(m).not.toBeNull();
      expect(matchEventLine(s) ?? matchLatencyLine(s)).not.toBeNull();
    }
  });
});

describe('frameKey equals the regexes it replaced', () => {
  const framePiece = fc.constantFrom(
    'sym',
    '_x',
    '+',
    '+0x1a',
    '+0X1',
    '/0x40',
    '/',
    ' ',
    '\t',
    '[',
    ']',
    ' [mod]',
    '[a+0x1]',
    '<',
    '>',
    '(',
    ')',
    '0x',
    'ffffffff81234567',
    'ab',
    '0',
    'G',
  );
  it('on generated frames', () => {
    fc.assert(
      fc.property(
        fc.array(framePiece, { maxLength: 10 }).map((a) => a.join('')),
        (s) => {
          expect(frameKey(s)).toBe(frameKeyByRegex(s));
        },
      ),
      { numRuns: 30000 },
    );
  });
});
