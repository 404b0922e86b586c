import { Growable, StringTable } from './growable.ts';

const FRAME_LIMIT = 1 << 22;

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
  private children: Map<number, number>;
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
    this.children = new Map();
    this.isStack = new Growable(Uint8Array);
    this.stackOrder = new Growable(Int32Array);
    this.readOnly = false;
    this.nodeFrame.push(-1);
    this.nodeParent.push(-1);
    this.nodeDepth.push(0);
    this.isStack.push(0);
  }

  /** Interns a stack given as frame keys, leaf first; returns its node. */
  intern(leafFirst: readonly string[]): number {
    if (this.readOnly) throw new Error('a snapshot of the stack table is read-only');
    let node = 0;
    for (let i = leafFirst.length - 1; i >= 0; i--) {
      const frame = this.frames.intern(leafFirst[i]);
      if (frame >= FRAME_LIMIT) throw new Error('more than 4M distinct frames');
      const key = node * FRAME_LIMIT + frame;
      let child = this.children.get(key);
      if (child === undefined) {
        child = this.nodeFrame.length;
        this.nodeFrame.push(frame);
        this.nodeParent.push(node);
        this.nodeDepth.push(this.nodeDepth.get(node) + 1);
        this.isStack.push(0);
        this.children.set(key, child);
      }
      node = child;
    }
    if (this.isStack.get(node) === 0) {
      this.isStack.set(node, 1);
      this.stackOrder.push(node);
    }
    return node;
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
    for (let n = m.nodes; n < this.nodeFrame.length; n++) {
      this.children.delete(this.nodeParent.get(n) * FRAME_LIMIT + this.nodeFrame.get(n));
    }
    this.nodeFrame.truncate(m.nodes);
    this.nodeParent.truncate(m.nodes);
    this.nodeDepth.truncate(m.nodes);
    this.isStack.truncate(m.nodes);
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
      children: new Map(),
      isStack: this.isStack.frozen(),
      stackOrder: this.stackOrder.frozen(),
      fixedSize: size,
      readOnly: true,
    });
    return s;
  }
}
