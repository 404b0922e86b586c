/**
 * The contents behind src/core/formats/fixtures/zstd/ (made by the zstd command line, see the
 * README there): deterministic, so a test regenerates what each fixture must decompress to.
 */

/** A small LCG: the same bytes on every machine. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x >>> 8;
  };
}

const enc = new TextEncoder();

/** ftrace-like lines: varied numbers and names (Huffman literals, many sequences). */
export function traceText(bytes: number): Uint8Array {
  const r = rng(7);
  const comms = ['<idle>-0', 'kworker/1:2-88', 'bash-4021', 'systemd-1', 'irq/42-nvme0q1-311', 'rcu_sched-14'];
  const events = ['sched_switch', 'sched_wakeup', 'irq_handler_entry', 'kernel_stack', 'stackmap_record'];
  const parts: string[] = [];
  let n = 0;
  let ts = 1000;
  while (n < bytes) {
    ts += r() % 5000;
    const line = `${comms[r() % comms.length].padStart(20)} [${String(r() % 8).padStart(3, '0')}] d.h.. ${Math.floor(ts / 1e6)}.${String(ts % 1e6).padStart(6, '0')}: ${events[r() % events.length]}: <stack_id ${r() % 4096} gen ${r() % 4}> ip=0x${(0xffffffff81000000 + (r() % 0xffffff)).toString(16)}\n`;
    parts.push(line);
    n += line.length;
  }
  return enc.encode(parts.join('')).subarray(0, bytes);
}

/** Incompressible bytes (raw blocks). */
export function randomBytes(bytes: number): Uint8Array {
  const r = rng(11);
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = r() & 255;
  return out;
}

/** Runs of one byte, repeats far apart and text between (RLE blocks, long matches, repeat offsets). */
export function mixedBytes(bytes: number): Uint8Array {
  const r = rng(13);
  const out = new Uint8Array(bytes);
  const text = traceText(8192);
  let o = 0;
  while (o < bytes) {
    const kind = r() % 4;
    const len = Math.min(bytes - o, 1 + (r() % 20000));
    if (kind === 0) out.fill(r() & 255, o, o + len);
    else if (kind === 1 && o > 0) {
      const from = r() % o;
      for (let i = 0; i < len; i++) out[o + i] = out[from + (i % Math.max(1, o - from))];
    } else if (kind === 2) out.set(text.subarray(0, Math.min(len, text.length)), o);
    else for (let i = 0; i < len; i++) out[o + i] = r() & 7;
    o += len;
  }
  return out;
}

/** What each fixture holds: its file name -> its content. */
export const ZSTD_FIXTURES: Record<string, () => Uint8Array> = {
  'trace.l1.zst': () => traceText(256 << 10),
  'trace.l19.zst': () => traceText(256 << 10),
  'trace.stream.zst': () => traceText(256 << 10),
  'mixed.l9.zst': () => mixedBytes(384 << 10),
  'mixed.ultra22.zst': () => mixedBytes(384 << 10),
  'random.l3.zst': () => randomBytes(48 << 10),
  'two-frames.zst': () => {
    const a = traceText(100 << 10);
    const b = mixedBytes(60 << 10);
    const out = new Uint8Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  },
  'tiny.zst': () => enc.encode('x'),
  'empty.zst': () => new Uint8Array(0),
};
