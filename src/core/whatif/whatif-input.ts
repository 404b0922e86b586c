import type { Capture } from '../capture/ingest.ts';
import { RecordKind } from '../capture/trace-columns-data.ts';
import { ipsToWords } from '../sim/map-layout.ts';
import { ReplayKernel } from '../sim/replay.ts';

/**
 * What the what-if replay (whatif.ts) needs of a capture, as typed arrays only, so the ingest
 * worker hands it to a worker of its own (workers/whatif.worker.ts) in one message and goes back
 * to the panes' queries. `whatIfColumns` is one linear pass over the capture's records and
 * events (in the ingest worker); `prepareWhatIf` puts them in time order and makes each distinct
 * stack's ips (in the what-if worker).
 */
export interface WhatIfColumns {
  /** items: each event (with the full stack recorded with it, if any), and each full stack record without an event */
  count: number;
  ts: Float64Array;
  cpu: Int32Array;
  /** 1: an event record precedes the stack (0: an orphan stack record) */
  event: Uint8Array;
  /** index into the distinct stacks, -1 for none (an event without a full stack) */
  stack: Int32Array;
  /** distinct stacks, leaf first: stack s is frameNames[frameIds[i]] for i in [frameStart[s], frameStart[s + 1]) */
  frameIds: Int32Array;
  frameStart: Int32Array;
  frameNames: string[];
  /** frames of each distinct stack */
  depths: Int32Array;
  /** stack records that are not full stacks (cookies, user stacks): not replayed */
  other: number;
  /** the per-CPU ring buffer the capture recorded (capture.sh's capture.txt), KB; null when none did */
  captureBufferKb: number | null;
  /** the file that said so */
  captureBufferFile: string | null;
}

/** The columns in time order, with each CPU as an index into `cpus`. */
export interface WhatIfInput {
  count: number;
  /** CPU index of each item, in time order */
  cpuIndex: Int32Array;
  event: Uint8Array;
  stack: Int32Array;
  /** the CPUs, ascending */
  cpus: number[];
  /** words of each distinct stack (views into the columns' words) */
  words: Uint32Array[];
  depths: Int32Array;
  other: number;
  captureBufferKb: number | null;
  captureBufferFile: string | null;
}

/** The buffer size a capture.txt in the capture recorded (the first that has one). */
function recordedBuffer(capture: Capture): { kb: number | null; file: string | null } {
  for (const f of capture.files) if (f.capture?.bufferKb != null) return { kb: f.capture.bufferKb, file: f.file };
  return { kb: null, file: null };
}

export function whatIfColumns(capture: Capture): WhatIfColumns {
  const t = capture.trace;
  const nEv = t.eventCount;
  const nRec = t.recordCount;
  const recEvent = t.recEvent.raw();
  const recKind = t.recKind.raw();
  const recStack = t.recStack.raw();
  const recTs = t.recTs.raw();
  const recCpu = t.recCpu.raw();
  const evTs = t.evTs.raw();
  const evCpu = t.evCpu.raw();
  /** distinct stack of each stack-table node, -1 before it is seen */
  const byNode = new Int32Array(capture.stacks.nodeCount).fill(-1);
  const frames: string[][] = [];
  const fullOf = new Int32Array(nEv).fill(-1);
  // orphans first (in record order), then every event: the order the stable sort keeps at equal times
  const orphanRec: number[] = [];
  const orphanStack: number[] = [];
  let other = 0;
  for (let r = 0; r < nRec; r++) {
    if (recKind[r] !== RecordKind.Full || recStack[r] <= 0) {
      other++;
      continue;
    }
    const node = recStack[r];
    if (node >= byNode.length) throw new RangeError(`record ${r} names stack node ${node}, beyond the table's ${byNode.length}`);
    let s = byNode[node];
    if (s === -1) {
      s = frames.length;
      byNode[node] = s;
      frames.push(capture.stacks.framesOf(node));
    }
    const e = recEvent[r];
    if (e >= 0 && fullOf[e] === -1) fullOf[e] = s;
    else {
      orphanRec.push(r);
      orphanStack.push(s);
    }
  }
  const count = orphanRec.length + nEv;
  const ts = new Float64Array(count);
  const cpu = new Int32Array(count);
  const event = new Uint8Array(count);
  const stack = new Int32Array(count);
  for (let i = 0; i < orphanRec.length; i++) {
    ts[i] = recTs[orphanRec[i]];
    cpu[i] = recCpu[orphanRec[i]];
    stack[i] = orphanStack[i];
  }
  for (let e = 0, i = orphanRec.length; e < nEv; e++, i++) {
    ts[i] = evTs[e];
    cpu[i] = evCpu[e];
    event[i] = 1;
    stack[i] = fullOf[e];
  }
  // the frames as ids into the distinct frame keys: numbers travel as one buffer, each key once
  const frameStart = new Int32Array(frames.length + 1);
  for (let s = 0; s < frames.length; s++) frameStart[s + 1] = frameStart[s] + frames[s].length;
  const frameIds = new Int32Array(frameStart[frames.length]);
  const idOf = new Map<string, number>();
  const frameNames: string[] = [];
  for (let s = 0, i = 0; s < frames.length; s++)
    for (const key of frames[s]) {
      let id = idOf.get(key);
      if (id === undefined) {
        idOf.set(key, (id = frameNames.length));
        frameNames.push(key);
      }
      frameIds[i++] = id;
    }
  const buf = recordedBuffer(capture);
  return {
    count,
    ts,
    cpu,
    event,
    stack,
    frameIds,
    frameStart,
    frameNames,
    depths: Int32Array.from(frames, (f) => f.length),
    other,
    captureBufferKb: buf.kb,
    captureBufferFile: buf.file,
  };
}

/** The columns' typed arrays, to transfer them (each once). */
export function columnBuffers(c: WhatIfColumns): ArrayBuffer[] {
  return [c.ts, c.cpu, c.event, c.stack, c.frameIds, c.frameStart, c.depths].map((a) => a.buffer as ArrayBuffer);
}

/**
 * The items in time order (stable: equal times keep the columns' order), each CPU as an index, and
 * each distinct stack as the map's words: frame keys become ips as the simulator's replay makes
 * them (`ReplayKernel`: the same key is the same ip).
 */
export function prepareWhatIf(c: WhatIfColumns): WhatIfInput {
  const n = c.count;
  const ts = c.ts;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => ts[a] - ts[b] || a - b);
  const cpus = [...new Set(c.cpu)].sort((a, b) => a - b);
  const cpuOf = new Map(cpus.map((cpu, i) => [cpu, i]));
  const cpuIndex = new Int32Array(n);
  const event = new Uint8Array(n);
  const stack = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const j = order[i];
    cpuIndex[i] = cpuOf.get(c.cpu[j])!;
    event[i] = c.event[j];
    stack[i] = c.stack[j];
  }
  const frames = Array.from(c.depths, (_, s) => Array.from(c.frameIds.subarray(c.frameStart[s], c.frameStart[s + 1]), (id) => c.frameNames[id]));
  const kernel = new ReplayKernel(frames);
  const words = frames.map((f) => ipsToWords(f.map((k) => kernel.ipOf(k))));
  return {
    count: n,
    cpuIndex,
    event,
    stack,
    cpus,
    words,
    depths: c.depths,
    other: c.other,
    captureBufferKb: c.captureBufferKb,
    captureBufferFile: c.captureBufferFile,
  };
}
