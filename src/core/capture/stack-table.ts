import { Growable } from '../base/growable.ts';
import { GUARD_PROBES_PER_LOOKUP, GUARD_SLACK } from '../base/string-table.ts';
import { FrameTable, type FrameTableMark } from './frame-table.ts';
import { pairSlot, randomWords } from '../base/keyed-hash.ts';

const SIBLING_BITS = 10;

/**
 * The child table's slot function as it was: Fibonacci hashing of both, unkeyed. Frames are
 * interned in the order a file first names them, so a file picks which frame ids a node's
 * children have, and with this function, ids whose slots crowd together (kept as fixedHashForTests).
 */
export const fixedSlotOf = (parent: number, frame: number, shift: number) => Math.imul(Math.imul(parent, 0x9e3779b1) ^ frame, 0x85ebca6b) >>> shift;

/** Re-keys at most this often (as StringTable). */
const MAX_REKEYS = 3;

/** A node's byte (`meta`): bit 7 says it ends a stack, bits 0-6 are its depth, DEEP for DEEP or more. */
const STACK = 0x80;
const DEEP = 0x7f;

export interface StackTableOptions {
  /** the child table starts with fixedSlotOf, until its guard re-keys it (tests: the old function's flood) */
  fixedHashForTests?: boolean;
  /** false: never re-key (tests: the guard's bound can fail) */
  guardForTests?: boolean;
}

/** Where a stack table stood: what rollback() returns it to. */
export interface StackTableMark {
  nodes: number;
  frames: FrameTableMark;
  stacks: number;
}

/**
 * Every distinct kernel stack from every source, stored once as a prefix tree: node n has a
 * frame and a parent, root first (the outermost caller at the top), so stacks that share
 * callers share nodes. A stack is identified by its leaf node; node 0 is the empty stack.
 *
 * Append-only while a session reads files (a node, once made, keeps its index), with
 * `mark()`/`rollback()` to undo a load that was cancelled or failed, and `snapshot()` for the
 * read-only table a capture holds while the session goes on.
 */
export class StackTable {
  readonly frames: FrameTable;
  /**
   * The node columns, [0, nodes) in use, the rest capacity (grown by doubling, or to what
   * `reserve` asked for). A snapshot shares the three read columns: nodes [0, sharedUpTo) are
   * seen by one, so the live table never writes there (a rollback below that copies them first).
   */
  private nodeFrame: Int32Array;
  private nodeParent: Int32Array;
  private nodeDepth: Int32Array;
  /**
   * A byte per node, written as the node is made with its frame and parent: bit 7 (STACK) when
   * it ends at least one stack (a stack may be a prefix of another), bits 0-6 its depth up to
   * DEEP - 1, DEEP for DEEP or more. Kernel stacks are at most 127 frames (PERF_MAX_STACK_DEPTH),
   * so a stack's depth is a byte read: a summary's depth of each record's stack neither walks up
   * nor fills a column of every node (36 MB at 8.9M nodes, faulted in as it is written). Same
   * capacity as the node columns; a snapshot shares it and reads the depth bits alone (a later
   * stack of the live table sets only bit 7 of a node it sees).
   */
  private meta: Uint8Array;
  /** some node is DEEP: its depth, and only then, comes from `nodeDepth` */
  private deep = false;
  /**
   * Nodes [0, depthKnown) have their depth in `nodeDepth`, which only DEEP nodes need (and
   * `depths`, a column of every node): filled when first asked, in one pass (a parent comes
   * before its children), not as nodes are made.
   */
  private depthKnown = 1;
  /** steps walked up by `depth` to a known depth (see there) */
  private depthWalked = 0;
  private nodes: number;
  private sharedUpTo = 0;
  /**
   * Child lookup, (parent, frame) -> child, in two parts. A node's implicit child is the node made
   * right after it, when that node's parent is it (a new tail is made in order: each node's first
   * child is the next node), read from the two columns with no table of its own: a dump of
   * millions of nodes, most of them in tails of one child each, writes nothing per node but its
   * frame, parent and stack mark (a column of first children, two words per node, was 72 MB at
   * 8.9M nodes and ~10% of a large dump's load). Every other child is in `siblings`: open
   * addressing with linear probing over an Int32Array of (parent, frame, child) triples (child 0 =
   * free: node 0 is nobody's child), at most half full, doubling when it would be more. Its slots
   * are keyed (pairSlot, a random key per table) and it re-keys when its chains grow long as
   * StringTable does: a file picks which frame ids a node's children have, not where they go.
   */
  private siblings: Int32Array;
  private siblingCount = 0;
  /** 32 - log2(slots) */
  private siblingShift: number;
  /** the nodes that end a stack (STACK in `meta`) in the order they became stacks, so a rollback can unmark them */
  private stackOrder: Growable<Int32Array>;
  /** a snapshot's count of distinct stacks, fixed when it was taken; null: count stackOrder */
  private fixedSize: number | null = null;
  private readonly readOnly: boolean;
  /** the child table's key (pairSlot); `fixed`: fixedSlotOf instead (fixedHashForTests) */
  private k0: number;
  private k1: number;
  private fixed: boolean;
  /** slots of the child table visited so far (test support: what a flood costs, counted) */
  probes = 0;
  /** times the child table took a new key */
  rekeys = 0;
  /** probes and lookups since the child table last took a key (the guard of StringTable) */
  private spent = 0;
  private lookups = 0;
  private guard: boolean;

  constructor(options: StackTableOptions = {}) {
    const key = randomWords(2);
    this.k0 = key[0] | 0;
    this.k1 = key[1] | 0;
    this.fixed = options.fixedHashForTests ?? false;
    this.guard = options.guardForTests ?? true;
    this.frames = new FrameTable();
    const cap = 1024;
    this.nodeFrame = new Int32Array(cap);
    this.nodeParent = new Int32Array(cap);
    this.nodeDepth = new Int32Array(cap);
    this.meta = new Uint8Array(cap);
    this.siblings = new Int32Array(3 << SIBLING_BITS);
    this.siblingShift = 32 - SIBLING_BITS;
    this.stackOrder = new Growable(Int32Array);
    this.readOnly = false;
    // node 0, the empty stack
    this.nodeFrame[0] = -1;
    this.nodeParent[0] = -1;
    this.nodes = 1;
  }

  /** Interns a stack given as frame keys, leaf first; returns its node. */
  intern(leafFirst: readonly string[]): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    let node = 0;
    for (let i = leafFirst.length - 1; i >= 0; i--) {
      node = this.child(node, this.frames.intern(leafFirst[i]));
    }
    return this.markStack(node);
  }

  /**
   * Interns a stack given as frame ids (indices into `frames`), leaf first: those of
   * `leafFirst[from, to)`; returns its node. Every id is checked before anything is made.
   */
  internFrameIds(leafFirst: Int32Array, from = 0, to = leafFirst.length): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    const known = this.frames.size;
    for (let i = from; i < to; i++) {
      const frame = leafFirst[i];
      if (!(frame >= 0 && frame < known)) throw new RangeError(`frame id ${frame} is not in the frame table (${known} frames)`);
    }
    return this.internOwnFrameIds(leafFirst, from, to);
  }

  /**
   * `internFrameIds` for ids this table's frames made (an IpPool's, of every ip of a dump): not
   * checked again, a pass over 8.9M ids of a 262,144-stack dump (~14 ms).
   */
  internOwnFrameIds(leafFirst: Int32Array, from: number, to: number): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    let node = 0;
    let i = to - 1;
    // down the nodes that exist. A node's first child is the node after it, whose columns share a
    // cache line with the node's own: read when the walk came to the node that way (`near`, and
    // at the root), so that child is looked at first; a node reached through the sibling table
    // has its columns unread, and its child is looked for in the table first (a dump's walks
    // leave the root's wide fan-out there: ~770k of 1.1M steps over 262,144 stacks, each of which
    // read two node columns at random first)
    const parentCol = this.nodeParent;
    const frameCol = this.nodeFrame;
    const made = this.nodes;
    let near = true;
    for (; i >= from; i--) {
      const frame = leafFirst[i];
      const next = node + 1;
      // the newest node has no children: the rest is a new tail
      if (next === made) break;
      if (near && parentCol[next] === node && frameCol[next] === frame) {
        node = next;
        continue;
      }
      const c = this.sibling(node, frame);
      if (c > 0) {
        node = c;
        near = false;
        continue;
      }
      if (!near && parentCol[next] === node && frameCol[next] === frame) {
        node = next;
        near = true;
        continue;
      }
      node = this.addSibling(node, frame, ~c);
      i--;
      break;
    }
    // a new node has no children: the rest of the stack is a new tail, each node its parent's implicit first child
    if (i >= from) {
      this.ensure(i - from + 1);
      const frameOut = this.nodeFrame;
      const parentOut = this.nodeParent;
      const meta = this.meta;
      let depth = meta[node] & DEEP;
      let c = this.nodes;
      for (; i >= from; i--) {
        if (depth < DEEP) depth++;
        frameOut[c] = leafFirst[i];
        parentOut[c] = node;
        meta[c] = depth;
        node = c++;
      }
      if (depth === DEEP) this.deep = true;
      this.nodes = c;
    }
    return this.markStack(node);
  }

  /**
   * Makes room for `extra` more nodes and `stacks` more stacks, so a bulk load (a dump's stacks)
   * does not regrow the columns or the child table on the way: a stack interned makes at most
   * one entry in `siblings` (the walk down leaves the nodes that exist at its first new node).
   */
  reserve(extra: number, stacks = 0): void {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    if (this.nodes + extra > this.nodeFrame.length) this.resize(this.nodes + extra);
    let slots = this.siblings.length / 3;
    while (2 * (this.siblingCount + stacks) > slots) slots *= 2;
    if (slots > this.siblings.length / 3) this.rehash(slots);
  }

  private markStack(node: number): number {
    const m = this.meta[node];
    if ((m & STACK) === 0) {
      this.meta[node] = m | STACK;
      this.stackOrder.push(node);
    }
    return node;
  }

  /** The child of `node` with `frame`, made when there is none. */
  private child(node: number, frame: number): number {
    const next = node + 1;
    // the newest node has no children: its first is the next node made
    if (next === this.nodes) return this.newNode(node, frame);
    if (this.nodeParent[next] === node && this.nodeFrame[next] === frame) return next;
    const c = this.sibling(node, frame);
    return c > 0 ? c : this.addSibling(node, frame, ~c);
  }

  /** The child of `node` with `frame` in the sibling table, or ~slot of the free slot where it would go. */
  private sibling(node: number, frame: number): number {
    if (this.guard && this.spent > GUARD_PROBES_PER_LOOKUP * this.lookups + GUARD_SLACK) this.rekey();
    const table = this.siblings;
    const mask = table.length / 3 - 1;
    let h = this.slotOf(node, frame, this.siblingShift);
    this.lookups++;
    for (let probes = 1; ; probes++) {
      const c = table[3 * h + 2];
      if (c === 0 || (table[3 * h] === node && table[3 * h + 1] === frame)) {
        this.probes += probes;
        this.spent += probes;
        return c === 0 ? ~h : c;
      }
      h = (h + 1) & mask;
    }
  }

  private slotOf(parent: number, frame: number, shift: number): number {
    return this.fixed ? fixedSlotOf(parent, frame, shift) : pairSlot(parent, frame, this.k0, this.k1, shift);
  }

  /** A fresh random key (and pairSlot, if it was fixedSlotOf): the child table built again. */
  private rekey(): void {
    const key = randomWords(2);
    this.k0 = key[0] | 0;
    this.k1 = key[1] | 0;
    this.fixed = false;
    this.rehash(this.siblings.length / 3);
    this.spent = 0;
    this.lookups = 0;
    if (++this.rekeys >= MAX_REKEYS) this.guard = false;
  }

  /** A new child of `node` (not the node made right after it, its implicit child) with `frame`, at free slot `h` of the sibling table. */
  private addSibling(node: number, frame: number, h: number): number {
    const c = this.newNode(node, frame);
    const table = this.siblings;
    table[3 * h] = node;
    table[3 * h + 1] = frame;
    table[3 * h + 2] = c;
    const slots = table.length / 3;
    if (2 * ++this.siblingCount > slots) this.rehash(2 * slots);
    return c;
  }

  private newNode(parent: number, frame: number): number {
    this.ensure(1);
    const c = this.nodes++;
    this.nodeFrame[c] = frame;
    this.nodeParent[c] = parent;
    const depth = this.meta[parent] & DEEP;
    this.meta[c] = depth < DEEP ? depth + 1 : DEEP;
    if (depth + 1 >= DEEP) this.deep = true;
    return c;
  }

  /** Room for `extra` more nodes, doubling. */
  private ensure(extra: number): void {
    const need = this.nodes + extra;
    if (need > this.nodeFrame.length) this.resize(Math.max(need, 2 * this.nodeFrame.length));
  }

  /** New node columns of `capacity` (not shared with any snapshot). */
  private resize(capacity: number): void {
    const n = this.nodes;
    const copy = <T extends Int32Array | Uint8Array>(a: T, make: new (k: number) => T, upTo = n): T => {
      const b = new make(capacity);
      b.set(a.subarray(0, upTo) as never);
      return b;
    };
    this.nodeFrame = copy(this.nodeFrame, Int32Array);
    this.nodeParent = copy(this.nodeParent, Int32Array);
    // only the depths known: the rest are never read (a node's byte, or filled when asked), and copying them wrote 4 bytes a node into fresh memory at every growth
    this.nodeDepth = copy(this.nodeDepth, Int32Array, this.depthKnown);
    this.meta = copy(this.meta, Uint8Array);
    this.sharedUpTo = 0;
  }

  /** The sibling table again with `slots` slots. */
  private rehash(slots: number): void {
    const old = this.siblings;
    const table = new Int32Array(3 * slots);
    const shift = 32 - Math.log2(slots);
    const mask = slots - 1;
    let probes = 0;
    for (let i = 2; i < old.length; i += 3) {
      if (old[i] === 0) continue;
      let h = this.slotOf(old[i - 2], old[i - 1], shift);
      probes++;
      while (table[3 * h + 2] !== 0) {
        h = (h + 1) & mask;
        probes++;
      }
      table.set(old.subarray(i - 2, i + 1), 3 * h);
    }
    this.probes += probes;
    this.spent += probes;
    this.siblings = table;
    this.siblingShift = shift;
  }

  /**
   * Forgets node `c`, the newest node (rollback goes newest first): as its parent's first
   * child (then, being its earliest child, the parent has no other left), else from the
   * sibling table by backward-shift deletion, which keeps every probe chain whole.
   */
  private unlink(c: number): void {
    const parent = this.nodeParent[c];
    if (c === parent + 1) return;
    const table = this.siblings;
    const mask = table.length / 3 - 1;
    const shift = this.siblingShift;
    let h = this.slotOf(parent, this.nodeFrame[c], shift);
    while (table[3 * h + 2] !== c) h = (h + 1) & mask;
    let hole = h;
    for (let j = (hole + 1) & mask; ; j = (j + 1) & mask) {
      if (table[3 * j + 2] === 0) break;
      const home = this.slotOf(table[3 * j], table[3 * j + 1], shift);
      // the entry at j may fill the hole when its home slot is cyclically outside (hole, j]
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        table.copyWithin(3 * hole, 3 * j, 3 * j + 3);
        hole = j;
      }
    }
    table.fill(0, 3 * hole, 3 * hole + 3);
    this.siblingCount--;
  }

  /**
   * Distinct stacks: interned so far in a live table; in a capture's snapshot, the count it
   * was given (the stacks some source still references, see Ingest.finish).
   */
  get size(): number {
    return this.fixedSize ?? this.stackOrder.length;
  }
  get nodeCount(): number {
    return this.nodes;
  }
  parent(node: number): number {
    return this.nodeParent[node];
  }
  frame(node: number): number {
    return this.nodeFrame[node];
  }
  depth(node: number): number {
    const byte = this.meta[node] & DEEP;
    if (byte < DEEP) return byte;
    if (node < this.depthKnown) return this.nodeDepth[node];
    // a DEEP node's: a few asks of a large table walk up to a known depth; once the walks pass a
    // quarter of the nodes the fill would write, the fill, one pass, is cheaper from then on
    if (this.depthWalked < (this.nodes - this.depthKnown) >> 2) {
      const parent = this.nodeParent;
      let d = 0;
      let n = node;
      for (; n >= this.depthKnown; n = parent[n]) d++;
      this.depthWalked += d;
      return d + this.nodeDepth[n];
    }
    this.depthsUpTo(this.nodes);
    return this.nodeDepth[node];
  }
  /**
   * Says `asks` depth asks are coming (a pass over a trace's records): when walking up for each
   * would likely pass the budget `depth` keeps (a quarter of the nodes not filled), the fill runs
   * now, before any walk. A capture whose 262,144 records cite every stack of an 8M-node dump
   * walked 2M steps (57 ms in Chromium) before the fill (30 ms) took over. Each ask is guessed to
   * walk the nodes per stack (a stack's own tail: at most its depth), so a trace citing a few
   * hundred stacks of that dump still walks.
   */
  expectDepths(asks: number): void {
    // below DEEP a depth is its node's byte: nothing to walk or fill
    if (!this.deep) return;
    const left = this.nodes - this.depthKnown;
    if (left > 0 && (asks * (this.nodes - 1)) / Math.max(1, this.size) > left >> 2) this.depthsUpTo(this.nodes);
  }

  /** Frame keys of a stack, leaf first. */
  framesOf(node: number): string[] {
    const out: string[] = [];
    const frames = this.frames;
    for (let n = node; n > 0; n = this.nodeParent[n]) out.push(frames.name(this.nodeFrame[n]));
    return out;
  }

  /** Fills the depths of nodes [depthKnown, n): one more than the parent's (made before the child). */
  private depthsUpTo(n: number): void {
    const depth = this.nodeDepth;
    const parent = this.nodeParent;
    for (let c = this.depthKnown; c < n; c++) depth[c] = depth[parent[c]] + 1;
    if (n > this.depthKnown) this.depthKnown = n;
  }

  /** The node columns, [0, nodeCount): views of a snapshot's (which no one writes again), copies of a live table's. */
  columns(): { frame: Int32Array; parent: Int32Array } {
    return { frame: this.cut(this.nodeFrame), parent: this.cut(this.nodeParent) };
  }

  /**
   * The depth column, [0, nodeCount), as `columns()` gives the others: filled now where it was
   * not (one pass over every node: 36 ms at 8M nodes, which a page of rows need not wait for).
   */
  depths(): Int32Array {
    this.depthsUpTo(this.nodes);
    return this.cut(this.nodeDepth);
  }

  private cut(a: Int32Array): Int32Array {
    return this.readOnly ? a.subarray(0, this.nodes) : a.slice(0, this.nodes);
  }

  mark(): StackTableMark {
    return { nodes: this.nodes, frames: this.frames.mark(), stacks: this.stackOrder.length };
  }

  /** Forgets every node, frame and stack added since `m`. */
  rollback(m: StackTableMark): void {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    const order = this.stackOrder.raw();
    for (let i = m.stacks; i < order.length; i++) if (order[i] < m.nodes) this.meta[order[i]] &= DEEP;
    this.stackOrder.truncate(m.stacks);
    for (let n = this.nodes - 1; n >= m.nodes; n--) this.unlink(n);
    this.nodes = m.nodes;
    this.depthKnown = Math.min(this.depthKnown, m.nodes);
    // nodes a snapshot sees are about to be written again: the live table takes its own copy
    if (m.nodes < this.sharedUpTo) this.resize(this.nodeFrame.length);
    this.frames.truncate(m.frames);
  }

  /**
   * The table as it is now, read-only, sharing its arrays (nothing is copied but the frame
   * list's pointers); `size` is the given count of distinct stacks. Later interns and
   * rollbacks here do not show in it.
   */
  snapshot(size: number): StackTable {
    // a reserve() that overshot (stacks that shared nodes already there) is not copied away: the
    // columns fill in order, so capacity never used was never touched (as FrameTable.reserve)
    this.sharedUpTo = Math.max(this.sharedUpTo, this.nodes);
    const s = Object.create(StackTable.prototype) as StackTable;
    Object.assign(s, {
      frames: this.frames.snapshot(),
      nodeFrame: this.nodeFrame,
      nodeParent: this.nodeParent,
      nodeDepth: this.nodeDepth,
      depthKnown: this.depthKnown,
      depthWalked: 0,
      nodes: this.nodes,
      sharedUpTo: this.nodes,
      siblings: new Int32Array(0),
      meta: this.meta,
      deep: this.deep,
      stackOrder: this.stackOrder.frozen(),
      fixedSize: size,
      readOnly: true,
      probes: this.probes,
      rekeys: this.rekeys,
      guard: false,
    });
    return s;
  }
}
