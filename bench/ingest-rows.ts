// Types and helpers of bench/ingest.ts.

/** One row of the bench contract (bench/README.md). */
export interface Row {
  id: string;
  what: string;
  value: number;
  unit: string;
  baseline?: { what: string; value: number; unit: string };
  ratio?: number;
  goal?: string;
  met?: boolean;
  peers?: { name: string; value: number | null; unit: string; note?: string }[];
  note?: string;
}

/** What a child process measured: the best time and the best newline loop, alternating. */
export interface Child {
  kind: 'ingest' | 'parser' | 'memory';
  mb: number;
  ms: number;
  baseMs: number;
  /** CPU time of the process (every thread) for the same runs */
  cpuMs: number;
  baseCpuMs: number;
  check: string;
  /** bytes per event: process (after GC, beyond the stack table and what the other files hold alone) and the trace columns' buffers */
  memory: { events: number; process: number; columns: number; stackBytes: number; restBytes: number } | null;
}

/**
 * Bytes of every typed array's buffer reachable from `root` through own properties (each buffer
 * once, its whole capacity: what is held, not what is used). Arrays longer than 64 are not
 * walked (lists of strings or stacks, not columns); nor are the objects in `skip`.
 */
export function heldBytes(root: unknown, skip: object[] = []): number {
  const buffers = new Set<ArrayBufferLike>();
  const seen = new Set<object>(skip);
  const walk = (v: unknown, depth: number) => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      buffers.add(v.buffer);
      return;
    }
    if (depth > 4) return;
    if (Array.isArray(v)) {
      if (v.length <= 64) for (const x of v) walk(x, depth + 1);
      return;
    }
    if (v instanceof Map || v instanceof Set) return;
    for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(root, 0);
  let n = 0;
  for (const b of buffers) n += b.byteLength;
  return n;
}
