import { JHASH_INITVAL } from './jhash.ts';
import { C, ELT_WORDS, GATE_OFF, GATE_RESET, K } from './map-layout.ts';

/**
 * The insert path's warm case in WebAssembly, over the map's own shared memory (the map is a
 * `WebAssembly.Memory`, map-layout.ts): one CPU's hit at its stack's first slot, the same steps,
 * atomics and counters as the JS path's first-slot hit (map-insert.ts; the memory model is in
 * `MapInsert.insertHashed`'s comment), as instructions rather than calls: the gate's add and sub (`i32.atomic.rmw`), jhash2
 * over the stack where it lies in the same memory (past the map, where a Simulation puts its
 * stacks: `MapInsert.insertAt`; unless the caller gives its cached `hash`), the key
 * (plain), `val` (`i32.atomic.load`, the acquire), nr and the memcmp (plain, 8 bytes a step),
 * ref_count's saturating cmpxchg loop (a plain first guess, then `i32.atomic.rmw.cmpxchg`), the
 * CPU's ATTEMPTS, PROBES and SUCCESSES, and `memory.atomic.notify` when the leave sees a reset
 * waiting. Anything else gives up before its first counter (after undoing its gate add, as a
 * leave does) and the caller runs the JS path from the start, with the hash this wrote:
 * the option off, a reset's bit, a key that is not the hash, an unpublished slot, a different
 * stack. The module's bytes are made here from these instructions (no tool, no binary checked in).
 *
 * hit(cpuAt, wordsAt, nr, seed, shift, keysAt, valsAt, eltsAt, refMax, hash, outAt): byte
 * addresses; `hash` 0 hashes; returns the slot, or -1 (gave up; a hash it made is at outAt + 4).
 * On a hit the generation read inside the read side is at outAt.
 */
/** what `hit` returns when it gives up (exported for insert-wasm.test.ts) */
export const HIT_GAVE_UP = -1;

// opcodes
const I32 = 0x7f;
const BLOCK = 0x02,
  LOOP = 0x03,
  IF = 0x04,
  END = 0x0b,
  BR = 0x0c,
  BR_IF = 0x0d,
  RETURN = 0x0f,
  VOID = 0x40;
const GET = 0x20,
  SET = 0x21,
  TEE = 0x22;
const CONST = 0x41;
const LOAD = 0x28,
  LOAD64 = 0x29,
  STORE = 0x36;
const EQZ = 0x45,
  EQ = 0x46,
  NE = 0x47,
  GE_U = 0x4f,
  GT_U = 0x4b;
const ADD = 0x6a,
  SUB = 0x6b,
  MUL = 0x6c,
  AND = 0x71,
  OR = 0x72,
  XOR = 0x73,
  SHL = 0x74,
  SHR_U = 0x76,
  ROTL = 0x77;
const I64_NE = 0x52;
const ATOMIC = 0xfe,
  NOTIFY = 0x00,
  A_LOAD = 0x10,
  A_ADD = 0x1e,
  A_SUB = 0x25,
  A_CMPXCHG = 0x48;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}
function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}
const mem = (align: number, offset: number) => [align, ...uleb(offset)];

// parameters and locals
const P = { cpuAt: 0, wordsAt: 1, nr: 2, seed: 3, shift: 4, keysAt: 5, valsAt: 6, eltsAt: 7, refMax: 8, hash: 9, outAt: 10 };
const L = { gate: 11, a: 12, b: 13, c: 14, len: 15, p: 16, idx: 17, at: 18, cur: 19, old: 20, end: 21 };
const NPARAMS = 11;
const NLOCALS = 11;

function body(): number[] {
  const c: number[] = [];
  const e = (...x: number[]) => c.push(...x);
  const get = (i: number) => e(GET, i);
  const set = (i: number) => e(SET, i);
  const k = (n: number) => e(CONST, ...sleb(n));
  const word = (k: number) => 4 * k;
  // x op= expr helpers for jhash: x = x OP y ; x ^= rotl(y, r) ...
  const addTo = (x: number, y: number) => (get(x), get(y), e(ADD), set(x));
  const subFrom = (x: number, y: number) => (get(x), get(y), e(SUB), set(x));
  const xorRot = (x: number, y: number, r: number) => (get(x), get(y), k(r), e(ROTL, XOR), set(x));
  const subRot = (x: number, y: number, r: number) => (get(x), get(y), k(r), e(ROTL, SUB), set(x));
  const xorBy = (x: number, y: number) => (get(x), get(y), e(XOR), set(x));
  const leave = () => {
    // rcu_read_unlock(): the sub returns the gate; a reset waiting (GATE_RESET) is woken
    (get(P.cpuAt), k(1), e(ATOMIC, A_SUB, ...mem(2, word(K.INFLIGHT))));
    (k(GATE_RESET), e(AND), e(IF, VOID), get(P.cpuAt), k(-1), e(ATOMIC, NOTIFY, ...mem(2, word(K.INFLIGHT)), 0x1a /* drop */, END));
  };
  const giveUp = () => {
    leave();
    (k(HIT_GAVE_UP), e(RETURN));
  };

  // rcu_read_lock(): one add, which returns the reset and option bits
  (get(P.cpuAt), k(1), e(ATOMIC, A_ADD, ...mem(2, word(K.INFLIGHT))), set(L.gate));
  (get(L.gate), k(GATE_OFF | GATE_RESET), e(AND), e(IF, VOID), giveUp(), e(END));
  // the generation, exact inside the read side, for the caller
  (get(P.outAt), k(0), e(LOAD, ...mem(2, word(C.GENERATION))), e(STORE, ...mem(2, 0)));
  // jhash2 over 2 * nr words, as int32 (jhash.ts), unless the caller has the hash
  (get(P.hash), e(EQZ), e(IF, VOID));
  {
    (get(P.nr), k(1), e(SHL), set(L.len));
    (k(JHASH_INITVAL | 0), get(L.len), k(2), e(SHL), e(ADD), get(P.seed), e(ADD), e(TEE, L.a), e(TEE, L.b), set(L.c));
    (get(P.wordsAt), set(L.p));
    e(BLOCK, VOID, LOOP, VOID);
    (get(L.len), k(3), e(GT_U, EQZ, BR_IF, 1));
    (get(L.a), get(L.p), e(LOAD, ...mem(2, 0), ADD), set(L.a));
    (get(L.b), get(L.p), e(LOAD, ...mem(2, 4), ADD), set(L.b));
    (get(L.c), get(L.p), e(LOAD, ...mem(2, 8), ADD), set(L.c));
    (subFrom(L.a, L.c), xorRot(L.a, L.c, 4), addTo(L.c, L.b));
    (subFrom(L.b, L.a), xorRot(L.b, L.a, 6), addTo(L.a, L.c));
    (subFrom(L.c, L.b), xorRot(L.c, L.b, 8), addTo(L.b, L.a));
    (subFrom(L.a, L.c), xorRot(L.a, L.c, 16), addTo(L.c, L.b));
    (subFrom(L.b, L.a), xorRot(L.b, L.a, 19), addTo(L.a, L.c));
    (subFrom(L.c, L.b), xorRot(L.c, L.b, 4), addTo(L.b, L.a));
    (get(L.len), k(3), e(SUB), set(L.len));
    (get(L.p), k(12), e(ADD), set(L.p));
    e(BR, 0, END, END);
    (get(L.len), e(IF, VOID));
    {
      (get(L.len), k(3), e(EQ, IF, VOID), get(L.c), get(L.p), e(LOAD, ...mem(2, 8), ADD), set(L.c), e(END));
      (get(L.len), k(2), e(GE_U, IF, VOID), get(L.b), get(L.p), e(LOAD, ...mem(2, 4), ADD), set(L.b), e(END));
      (get(L.a), get(L.p), e(LOAD, ...mem(2, 0), ADD), set(L.a));
      (xorBy(L.c, L.b), subRot(L.c, L.b, 14));
      (xorBy(L.a, L.c), subRot(L.a, L.c, 11));
      (xorBy(L.b, L.a), subRot(L.b, L.a, 25));
      (xorBy(L.c, L.b), subRot(L.c, L.b, 16));
      (xorBy(L.a, L.c), subRot(L.a, L.c, 4));
      (xorBy(L.b, L.a), subRot(L.b, L.a, 14));
      (xorBy(L.c, L.b), subRot(L.c, L.b, 24));
    }
    e(END);
    // a hash of 0 is taken as 1
    (get(L.c), get(L.c), e(EQZ, OR), set(P.hash));
  }
  e(END);
  (get(P.outAt), get(P.hash), e(STORE, ...mem(2, 4)));
  // the first slot: its key (plain), then val (the acquire)
  (get(P.hash), get(P.shift), e(SHR_U), set(L.idx));
  (get(P.keysAt), get(L.idx), k(2), e(SHL, ADD, LOAD, ...mem(2, 0)), get(P.hash), e(NE, IF, VOID), giveUp(), e(END));
  (get(P.valsAt), get(L.idx), k(2), e(SHL, ADD), e(ATOMIC, A_LOAD, ...mem(2, 0)), e(TEE, L.at), e(EQZ, IF, VOID), giveUp(), e(END));
  // the element: nr, then the memcmp 8 bytes a step (a stack is whole (low, high) pairs)
  (get(P.eltsAt), get(L.at), k(1), e(SUB), k(4 * ELT_WORDS), e(MUL, ADD), set(L.at));
  (get(L.at), e(LOAD, ...mem(2, 0)), get(P.nr), e(NE, IF, VOID), giveUp(), e(END));
  (get(P.wordsAt), set(L.p));
  (get(P.wordsAt), get(P.nr), k(3), e(SHL, ADD), set(L.end));
  (get(L.at), k(8), e(ADD), set(L.cur));
  e(BLOCK, VOID, LOOP, VOID);
  (get(L.p), get(L.end), e(EQ, BR_IF, 1));
  (get(L.cur), e(LOAD64, ...mem(3, 0)), get(L.p), e(LOAD64, ...mem(3, 0)), e(I64_NE, IF, VOID), giveUp(), e(END));
  (get(L.p), k(8), e(ADD), set(L.p));
  (get(L.cur), k(8), e(ADD), set(L.cur));
  e(BR, 0, END, END);
  // ref_count++, saturating: the first expected value a plain read, then what the cmpxchg returns
  (get(L.at), e(LOAD, ...mem(2, 4)), set(L.cur));
  e(BLOCK, VOID, LOOP, VOID);
  (get(L.cur), get(P.refMax), e(GE_U, BR_IF, 1));
  (get(L.at), get(L.cur), get(L.cur), k(1), e(ADD), e(ATOMIC, A_CMPXCHG, ...mem(2, 4)), e(TEE, L.old), get(L.cur), e(EQ, BR_IF, 1));
  (get(L.old), set(L.cur));
  e(BR, 0, END, END);
  // this CPU's own counters: one writer, plain
  for (const w of [K.ATTEMPTS, K.PROBES, K.SUCCESSES]) (get(P.cpuAt), get(P.cpuAt), e(LOAD, ...mem(2, word(w))), k(1), e(ADD, STORE, ...mem(2, word(w))));
  leave();
  get(L.idx);
  e(END);
  return c;
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

/** The module's bytes: one function `hit`, importing the map's shared memory as m.mem. */
function hitModuleBytes(): Uint8Array<ArrayBuffer> {
  const name = (s: string) => [...uleb(s.length), ...Array.from(s, (ch) => ch.charCodeAt(0))];
  const type = section(1, [1, 0x60, ...uleb(NPARAMS), ...Array(NPARAMS).fill(I32), 1, I32]);
  const imp = section(2, [1, ...name('m'), ...name('mem'), 0x02, 0x03, ...uleb(1), ...uleb(65536)]);
  const fn = section(3, [1, 0]);
  const exp = section(7, [1, ...name('hit'), 0x00, 0]);
  const b = body();
  const fbody = [1, ...uleb(NLOCALS), I32, ...b];
  const code = section(10, [1, ...uleb(fbody.length), ...fbody]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...imp, ...fn, ...exp, ...code]);
}

export type HitFn = (
  cpuAt: number,
  wordsAt: number,
  nr: number,
  seed: number,
  shift: number,
  keysAt: number,
  valsAt: number,
  eltsAt: number,
  refMax: number,
  hash: number,
  outAt: number,
) => number;

let compiled: WebAssembly.Module | null | undefined;
/** `hit` over `memory`, or null where WebAssembly (or its threads) is not there. */
export function hitOver(memory: WebAssembly.Memory): HitFn | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(hitModuleBytes());
    } catch {
      compiled = null;
    }
  }
  if (compiled === null) return null;
  return new WebAssembly.Instance(compiled, { m: { mem: memory } }).exports.hit as HitFn;
}
