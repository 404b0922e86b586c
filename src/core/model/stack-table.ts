import { Growable, StringTable } from './growable.ts';

const FRAME_LIMIT = 1 << 22;

const SIBLING_BITS = 10;

/** Slot of (parent, frame) in a child table of 2^(32 - shift) slots: Fibonacci hashing of both. */
const slotOf = (parent: number, frame: number, shift: number) =>
  Math.imul(Math.imul(parent, 0x9e3779b1) ^ frame, 0x85ebca6b) >>> shift;

/** Where a stack table stood: what rollback() returns it to. */
export interface StackTableMark {
  nodes: number;
  frames: number;
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
  readonly frames: StringTable;
  private nodeFrame: Growable<Int32Array>;
  private nodeParent: Growable<Int32Array>;
  private nodeDepth: Growable<Int32Array>;
  /**
   * Child lookup, (parent, frame) -> child, in two parts. Each node's first child (the earliest
   * made) is stored with the node, so a walk down a new tail (the common case: most nodes of a
   * large dump have one child) touches nothing but the arrays it appends to. The other children
   * are in `siblings`: open addressing with linear probing over an Int32Array of
   * (parent, frame, child) triples (child 0 = free: node 0 is nobody's child), at most half
   * full, doubling when it would be more.
   */
  private firstChild: Growable<Int32Array>;
  private siblings: Int32Array;
  private siblingCount = 0;
  /** 32 - log2(slots) */
  private siblingShift: number;
  /** nodes that are the end of at least one stack (a stack may be a prefix of another) */
  private isStack: Growable<Uint8Array>;
  /** those nodes in the order they became stacks, so a rollback can unmark them */
  private stackOrder: Growable<Int32Array>;
  /** a snapshot's count of distinct stacks, fixed when it was taken; null: count stackOrder */
  private fixedSize: number | null = null;
  private readonly readOnly: boolean;

  constructor() {
    this.frames = new StringTable();
    this.nodeFrame = new Growable(Int32Array);
    this.nodeParent = new Growable(Int32Array);
    this.nodeDepth = new Growable(Int32Array);
    this.firstChild = new Growable(Int32Array);
    this.siblings = new Int32Array(3 << SIBLING_BITS);
    this.siblingShift = 32 - SIBLING_BITS;
    this.isStack = new Growable(Uint8Array);
    this.stackOrder = new Growable(Int32Array);
    this.readOnly = false;
    this.nodeFrame.push(-1);
    this.nodeParent.push(-1);
    this.nodeDepth.push(0);
    this.isStack.push(0);
    this.firstChild.push(0);
  }

  /** Interns a stack given as frame keys, leaf first; returns its node. */
  intern(leafFirst: readonly string[]): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    let node = 0;
    for (let i = leafFirst.length - 1; i >= 0; i--) {
      const frame = this.frames.intern(leafFirst[i]);
      if (frame >= FRAME_LIMIT) throw new Error('more than 4M distinct frames');
      node = this.child(node, frame);
    }
    return this.markStack(node);
  }

  /**
   * Interns a stack given as frame ids (indices into `frames`), leaf first: those of
   * `leafFirst[from, to)`; returns its node.
   */
  internFrameIds(leafFirst: Int32Array, from = 0, to = leafFirst.length): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    const known = this.frames.size;
    let node = 0;
    for (let i = to - 1; i >= from; i--) {
      const frame = leafFirst[i];
      if (!(frame >= 0 && frame < known)) throw new RangeError(`frame id ${frame} is not in the frame table (${known} frames)`);
      node = this.child(node, frame);
    }
    return this.markStack(node);
  }

  private markStack(node: number): number {
    if (this.isStack.get(node) === 0) {
      this.isStack.set(node, 1);
      this.stackOrder.push(node);
    }
    return node;
  }

  /** The child of `node` with `frame`, made when there is none. */
  private child(node: number, frame: number): number {
    const first = this.firstChild.get(node);
    if (first === 0) {
      const c = this.newNode(node, frame);
      this.firstChild.set(node, c);
      return c;
    }
    if (this.nodeFrame.get(first) === frame) return first;
    const table = this.siblings;
    const mask = table.length / 3 - 1;
    let h = slotOf(node, frame, this.siblingShift);
    for (;;) {
      const c = table[3 * h + 2];
      if (c === 0) break;
      if (table[3 * h] === node && table[3 * h + 1] === frame) return c;
      h = (h + 1) & mask;
    }
    const c = this.newNode(node, frame);
    table[3 * h] = node;
    table[3 * h + 1] = frame;
    table[3 * h + 2] = c;
    if (2 * ++this.siblingCount > mask + 1) this.rehash(2 * (mask + 1));
    return c;
  }

  private newNode(parent: number, frame: number): number {
    const c = this.nodeFrame.length;
    this.nodeFrame.push(frame);
    this.nodeParent.push(parent);
    this.nodeDepth.push(this.nodeDepth.get(parent) + 1);
    this.isStack.push(0);
    this.firstChild.push(0);
    return c;
  }

  /** The sibling table again with `slots` slots. */
  private rehash(slots: number): void {
    const old = this.siblings;
    const table = new Int32Array(3 * slots);
    const shift = 32 - Math.log2(slots);
    const mask = slots - 1;
    for (let i = 2; i < old.length; i += 3) {
      if (old[i] === 0) continue;
      let h = slotOf(old[i - 2], old[i - 1], shift);
      while (table[3 * h + 2] !== 0) h = (h + 1) & mask;
      table.set(old.subarray(i - 2, i + 1), 3 * h);
    }
    this.siblings = table;
    this.siblingShift = shift;
  }

  /**
   * Forgets node `c`, the newest node (rollback goes newest first): as its parent's first
   * child (then, being its earliest child, the parent has no other left), else from the
   * sibling table by backward-shift deletion, which keeps every probe chain whole.
   */
  private unlink(c: number): void {
    const parent = this.nodeParent.get(c);
    if (this.firstChild.get(parent) === c) {
      this.firstChild.set(parent, 0);
      return;
    }
    const table = this.siblings;
    const mask = table.length / 3 - 1;
    const shift = this.siblingShift;
    let h = slotOf(parent, this.nodeFrame.get(c), shift);
    while (table[3 * h + 2] !== c) h = (h + 1) & mask;
    let hole = h;
    for (let j = (hole + 1) & mask; ; j = (j + 1) & mask) {
      if (table[3 * j + 2] === 0) break;
      const home = slotOf(table[3 * j], table[3 * j + 1], shift);
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
    return this.nodeFrame.length;
  }
  parent(node: number): number {
    return this.nodeParent.get(node);
  }
  frame(node: number): number {
    return this.nodeFrame.get(node);
  }
  depth(node: number): number {
    return this.nodeDepth.get(node);
  }
  /** Frame keys of a stack, leaf first. */
  framesOf(node: number): string[] {
    const out: string[] = [];
    for (let n = node; n > 0; n = this.nodeParent.get(n)) out.push(this.frames.strings[this.nodeFrame.get(n)]);
    return out;
  }

  /** Columnar copy for transfer to the UI thread. */
  columns(): { frame: Int32Array; parent: Int32Array; depth: Int32Array; frameNames: string[] } {
    return {
      frame: this.nodeFrame.view(),
      parent: this.nodeParent.view(),
      depth: this.nodeDepth.view(),
      frameNames: this.frames.strings.slice(),
    };
  }

  mark(): StackTableMark {
    return { nodes: this.nodeFrame.length, frames: this.frames.size, stacks: this.stackOrder.length };
  }

  /** Forgets every node, frame and stack added since `m`. */
  rollback(m: StackTableMark): void {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    const order = this.stackOrder.raw();
    for (let i = m.stacks; i < order.length; i++) if (order[i] < m.nodes) this.isStack.set(order[i], 0);
    this.stackOrder.truncate(m.stacks);
    for (let n = this.nodeFrame.length - 1; n >= m.nodes; n--) this.unlink(n);
    this.nodeFrame.truncate(m.nodes);
    this.nodeParent.truncate(m.nodes);
    this.nodeDepth.truncate(m.nodes);
    this.isStack.truncate(m.nodes);
    this.firstChild.truncate(m.nodes);
    this.frames.truncate(m.frames);
  }

  /**
   * The table as it is now, read-only, sharing its arrays (nothing is copied but the frame
   * list's pointers); `size` is the given count of distinct stacks. Later interns and
   * rollbacks here do not show in it.
   */
  snapshot(size: number): StackTable {
    const s = Object.create(StackTable.prototype) as StackTable;
    Object.assign(s, {
      frames: this.frames.snapshot(),
      nodeFrame: this.nodeFrame.frozen(),
      nodeParent: this.nodeParent.frozen(),
      nodeDepth: this.nodeDepth.frozen(),
      firstChild: null,
      siblings: new Int32Array(0),
      isStack: this.isStack.frozen(),
      stackOrder: this.stackOrder.frozen(),
      fixedSize: size,
      readOnly: true,
    });
    return s;
  }
}
