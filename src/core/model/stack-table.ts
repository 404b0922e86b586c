import { Growable, StringTable } from './growable.ts';

const FRAME_LIMIT = 1 << 22;

/**
 * Every distinct kernel stack from every source, stored once as a prefix tree: node n has a
 * frame and a parent, root first (the outermost caller at the top), so stacks that share
 * callers share nodes. A stack is identified by its leaf node; node 0 is the empty stack.
 */
export class StackTable {
  readonly frames = new StringTable();
  private nodeFrame = new Growable(Int32Array);
  private nodeParent = new Growable(Int32Array);
  private nodeDepth = new Growable(Int32Array);
  private children = new Map<number, number>();
  /** nodes that are the end of at least one stack (a stack may be a prefix of another) */
  private isStack = new Growable(Uint8Array);
  private stackCount = 0;

  constructor() {
    this.nodeFrame.push(-1);
    this.nodeParent.push(-1);
    this.nodeDepth.push(0);
    this.isStack.push(0);
  }

  /** Interns a stack given as frame keys, leaf first; returns its node. */
  intern(leafFirst: readonly string[]): number {
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
      this.stackCount++;
    }
    return node;
  }

  /** Distinct stacks interned so far. */
  get size(): number {
    return this.stackCount;
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
}
