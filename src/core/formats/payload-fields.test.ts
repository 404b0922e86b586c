import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldInteger, payloadFields, payloadFieldsNamed, PayloadBytes } from './payload-fields.ts';
import { realIt, realTrace } from '../testing/real-traces.ts';

const fieldsOf = (p: string) => {
  const out: [string, string][] = [];
  payloadFields(p, (k, v) => out.push([k, v]));
  return out;
};

/** The rule said another way: split at blanks, a regular expression per word (the test's own, on short words). */
function reference(p: string): [string, string][] {
  const out: [string, string][] = [];
  for (const w of p.split(' ').filter((x) => x !== '')) {
    const m = /^([A-Za-z_][A-Za-z0-9_.]*)=(.*)$/s.exec(w);
    if (m) out.push([m[1], m[2]]);
    else if (out.length && /[A-Za-z0-9]/.test(w)) out[out.length - 1][1] += ' ' + w;
  }
  return out;
}

describe('payloadFields', () => {
  it('reads the kernel print formats of the common events (include/trace/events/kmem.h, sched.h)', () => {
    expect(
      fieldsOf('call_site=__kmalloc+0x4c/0x90 ptr=000000003f0e9a5b bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL|__GFP_ZERO node=-1 accounted=false'),
    ).toEqual([
      ['call_site', '__kmalloc+0x4c/0x90'],
      ['ptr', '000000003f0e9a5b'],
      ['bytes_req', '64'],
      ['bytes_alloc', '64'],
      ['gfp_flags', 'GFP_KERNEL|__GFP_ZERO'],
      ['node', '-1'],
      ['accounted', 'false'],
    ]);
    expect(fieldsOf('prev_comm=kworker/u8:1 prev_pid=12 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 next_prio=120')).toEqual([
      ['prev_comm', 'kworker/u8:1'],
      ['prev_pid', '12'],
      ['prev_prio', '120'],
      ['prev_state', 'R+'],
      ['next_comm', 'swapper/0'],
      ['next_pid', '0'],
      ['next_prio', '120'],
    ]);
    // a comm with a blank goes on with its value; an empty value is a value
    expect(fieldsOf('comm=Binder Thread pid=8 prio=120 target_cpu=000 x=')).toEqual([
      ['comm', 'Binder Thread'],
      ['pid', '8'],
      ['prio', '120'],
      ['target_cpu', '000'],
      ['x', ''],
    ]);
    expect(fieldsOf('do_work <-worker_thread')).toEqual([]);
    expect(fieldsOf('')).toEqual([]);
  });

  it('agrees with a word-by-word regular expression on any payload', () => {
    const word = fc.oneof(
      fc.constantFrom('==>', '-', 'a=b', 'k=', '=v', '_x.y=1=2', 'pid=12', 'R+', '9a=1', 'x'),
      fc.string({ unit: fc.constantFrom('a', 'Z', '_', '.', '=', '0', '9', '-', '>', '|', '+'), maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(word, fc.constantFrom(' ', '  ', '   ')), { maxLength: 12 }), (ws) => {
        const p = ws.map(([w, b]) => w + b).join('');
        expect(fieldsOf(p)).toEqual(reference(p));
      }),
      { numRuns: 2000 },
    );
  });

  realIt('on a real Android trace, each sched_switch has the seven fields the kernel format names', () => {
    const text = new TextDecoder().decode(realTrace('trappy-trace_surfaceflinger.html'));
    const payloads = text.split('\n').flatMap((l) => {
      const k = l.indexOf(' sched_switch: ');
      return k < 0 ? [] : [l.slice(k + ' sched_switch: '.length)];
    });
    expect(payloads.length).toBeGreaterThan(100);
    for (const p of payloads)
      expect(
        fieldsOf(p).map(([k]) => k),
        p,
      ).toEqual(['prev_comm', 'prev_pid', 'prev_prio', 'prev_state', 'next_comm', 'next_pid', 'next_prio']);
  });
});

describe('one field asked for: payloadFieldsNamed and PayloadBytes (what an event filter reads)', () => {
  const word = fc.oneof(
    fc.constantFrom('==>', '-', 'a=b', 'k=', '=v', 'pid=12', 'pid=', 'xpid=3', 'comm=Binder', 'Thread', 'é=1', 'comm=é', 'R+', 'x'),
    fc.string({ unit: fc.constantFrom('a', 'p', 'i', 'd', '_', '.', '=', '0', '-', '|', 'é'), maxLength: 8 }),
  );
  const NAMES = ['pid', 'comm', 'a', 'k', 'd'];
  it("each named key's first value is the reference reading's (a word-by-word regular expression), for any payload, as text and as UTF-8 bytes at any offset", () => {
    const bytes = new PayloadBytes(() => undefined);
    fc.assert(
      fc.property(fc.array(fc.tuple(word, fc.constantFrom(' ', '  ')), { maxLength: 12 }), fc.nat(5), (ws, pad) => {
        const p = ws.map(([w, b]) => w + b).join('');
        const want = new Map<string, string>();
        for (const [k, v] of reference(p)) if (!want.has(k)) want.set(k, v);
        const named = new Map<string, string>();
        payloadFieldsNamed(p, NAMES, (k, v) => named.set(k, v));
        const enc = new TextEncoder().encode(p);
        const buf = new Uint8Array(pad + enc.length + 3).fill(0x41);
        buf.set(enc, pad);
        bytes.at(buf, pad, pad + enc.length);
        for (const n of NAMES) {
          expect(named.get(n), `${n} in ${JSON.stringify(p)}`).toBe(want.get(n));
          expect(bytes.text(n), `${n} in ${JSON.stringify(p)}`).toBe(want.get(n));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('int reads the value with the reading it is given', () => {
    const b = new TextEncoder().encode('bytes_req=64 bytes_alloc=0x40 gfp_flags=GFP_KERNEL');
    const p = new PayloadBytes((t) => (/^\d+$/.test(t) ? BigInt(t) : t.startsWith('0x') ? BigInt(t) : undefined)).at(b, 0, b.length);
    expect([p.int('bytes_req'), p.int('bytes_alloc'), p.int('gfp_flags'), p.int('node')]).toEqual([64n, 64n, undefined, undefined]);
  });
});

describe('fieldInteger', () => {
  it('is the value as Number or BigInt reads it, where a double holds it exactly; NaN otherwise', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), fc.boolean(), fc.nat(3), (v, hex, zeros) => {
        const text = hex ? (v < 0n ? null : '0x' + '0'.repeat(zeros) + v.toString(16)) : (v < 0n ? '-' : '') + '0'.repeat(zeros) + (v < 0n ? -v : v).toString();
        if (text === null) return;
        const digits = hex ? text.length - 2 : text.replace('-', '').length;
        const fits = digits <= (hex ? 13 : 15);
        expect(fieldInteger(text)).toBe(fits ? Number(v) : NaN);
      }),
      { numRuns: 3000 },
    );
    for (const t of ['', '-', '0x', '12a', '0xfg', 'GFP_KERNEL', '0xffff888044fa5be4', '000000003f0e9a5b', '1.5', '+1']) expect(fieldInteger(t), t).toBeNaN();
  });
});
