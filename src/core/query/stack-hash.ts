import type { ExplorerData } from './explorer-data.ts';
import { genValue, NO_GEN } from './selection.ts';
import type { DumpSlotRef } from './api.ts';
import type { SlotMap } from '../capture/slot-map.ts';
import { IntPositions } from '../base/int-positions.ts';

/**
 * A stack's identity across captures (DESIGN 3): FNV-1a 64-bit over the UTF-8 frame keys, leaf
 * first, joined by `\n`, printed as 16 lowercase hex digits. The URL, exports and tables name a
 * stack by it, never by this capture's internal index (which another capture reuses for another
 * stack, and which a kernel engineer would read as a stack_id).
 */

/** 16 lowercase hex digits: the only text `?stack=` accepts */
export function isStackHash(s: string): boolean {
  if (s.length !== 16) return false;
  for (let i = 0; i < 16; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * FNV-1a 64 over bytes, in four 16-bit limbs (every product stays exact in a double: the prime
 * 0x100000001b3 is 2^40 + 0x1b3, so h * prime = h * 0x1b3 + (h << 40)).
 */
export class Fnv1a64 {
  private h0 = 0x2325;
  private h1 = 0x8422;
  private h2 = 0x9ce4;
  private h3 = 0xcbf2;

  update(bytes: Uint8Array): this {
    let { h0, h1, h2, h3 } = this;
    for (let i = 0; i < bytes.length; i++) {
      h0 ^= bytes[i];
      const t0 = h0 * 0x1b3;
      const t1 = h1 * 0x1b3 + (t0 >>> 16);
      const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
      const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
      h0 = t0 & 0xffff;
      h1 = t1 & 0xffff;
      h2 = t2 & 0xffff;
      h3 = t3 & 0xffff;
    }
    Object.assign(this, { h0, h1, h2, h3 });
    return this;
  }

  /** 16 lowercase hex digits */
  hex(): string {
    const hex = (x: number) => x.toString(16).padStart(4, '0');
    return hex(this.h3) + hex(this.h2) + hex(this.h1) + hex(this.h0);
  }
}

const utf8 = new TextEncoder();
let scratch = new Uint8Array(1024);

/**
 * FNV-1a 64 of a string's UTF-8 bytes (lone surrogates as U+FFFD, as TextEncoder writes them),
 * encoded into one reused buffer (3 bytes per UTF-16 unit at most).
 */
export function fnv1a64(text: string): string {
  if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3);
  const { written } = utf8.encodeInto(text, scratch);
  return new Fnv1a64().update(scratch.subarray(0, written)).hex();
}

/** stack_hash of frame keys, leaf first */
export const stackHash = (leafFirst: readonly string[]): string => fnv1a64(leafFirst.join('\n'));

interface Ids {
  hashOf: Map<number, string>;
  /** every stack of the capture (records and dumps) by hash; built on the first lookup */
  byHash: Map<string, number> | null;
}

// per capture, beside it rather than in it: ExplorerData stays the columns it was built from
const idsOf = new WeakMap<ExplorerData, Ids>();
function ids(d: ExplorerData): Ids {
  let x = idsOf.get(d);
  if (!x) idsOf.set(d, (x = { hashOf: new Map(), byHash: null }));
  return x;
}

/** stack_hash of one of the capture's stacks (memoized) */
export function stackHashOf(d: ExplorerData, stack: number): string {
  const m = ids(d).hashOf;
  let h = m.get(stack);
  if (h === undefined) m.set(stack, (h = stackHash(d.stacks.framesOf(stack))));
  return h;
}

/** Calls fn for each dump slot of the capture: generation key (NO_GEN for generation-less), slot, stack. */
function eachDumpSlot(d: ExplorerData, fn: (gen: number, slot: number, stack: number) => void): void {
  const dumps = d.capture.dumps;
  const each = (gen: number, c: ReturnType<SlotMap['columns']>) => {
    for (let i = 0; i < c.stack.length; i++) fn(gen, c.slot[i], c.stack[i]);
  };
  for (const gd of dumps.byGeneration.values()) each(gd.generation, gd.slots.columns());
  for (const gl of dumps.generationless) each(NO_GEN, gl.slots.columns());
}

/**
 * The capture's stack with this stack_hash, or null. Only stacks some record or dump holds are
 * candidates (a prefix of a stack is a node of the table, not a stack). Two stacks never share
 * a hash here: a 64-bit collision among a capture's stacks would keep the first.
 */
export function stackByHash(d: ExplorerData, hash: string): number | null {
  const x = ids(d);
  if (!x.byHash) {
    const byHash = new Map<string, number>();
    const seen = new Uint8Array(d.node.parent.length);
    const add = (s: number) => {
      if (s < 0 || seen[s]) return;
      seen[s] = 1;
      const h = stackHashOf(d, s);
      if (!byHash.has(h)) byHash.set(h, s);
    };
    const rs = d.rec.stack;
    for (let r = 0; r < rs.length; r++) add(rs[r]);
    eachDumpSlot(d, (_g, _slot, s) => add(s));
    x.byHash = byHash;
  }
  return x.byHash.get(hash) ?? null;
}

/**
 * Where the dumps hold each of `stacks`: generation and slot, by generation ('none' last) then
 * slot. One pass over every slot, keeping those of the stacks asked (a page of top stacks): an
 * index of every stack's slots was a Map entry and an object per slot, 280 ms before the first
 * rows of a 262,144-stack dump could be shown.
 */
export function dumpSlotsOfStacks(d: ExplorerData, stacks: readonly number[]): Map<number, DumpSlotRef[]> {
  const out = new Map<number, DumpSlotRef[]>();
  for (const s of stacks) out.set(s, []);
  if (!stacks.length) return out;
  const asked = new IntPositions(stacks);
  const lists = stacks.map((s) => out.get(s)!);
  eachDumpSlot(d, (gen, slot, stack) => {
    const at = asked.of(stack);
    if (at >= 0) lists[at].push({ generation: genValue(gen), slot });
  });
  const key = (g: number | 'none') => (g === 'none' ? Infinity : g);
  for (const l of out.values()) l.sort((a, b) => key(a.generation) - key(b.generation) || a.slot - b.slot);
  return out;
}
