import { TRAMPOLINE, TRAMPOLINE_IP } from '../formats/frames.ts';

/**
 * Replay of a loaded capture: its stacks, given as frame keys, become raw ips the simulated CPUs
 * can hash and compare, through a symbol table made for them, so an exported run prints and
 * symbolizes back to the same frame keys. `sym+0xoff` replays as that offset into a symbol
 * `sym`; a bare `sym` as `sym+0x0`; a raw `0x...` address stays that address; the trampoline
 * stays the trampoline marker.
 */

export interface ReplaySource {
  /** distinct stacks, frame keys leaf first */
  frames: string[][];
  /** occurrences of each in the capture: the weights the CPUs draw them by */
  counts: number[];
}

/** What an exported run needs of a kernel: how the trace prints an ip, and kallsyms. */
export interface SymbolSource {
  printFrame(ip: bigint): string;
  kallsyms(): string;
}

const BASE = 0xffffffffa0000000n;
const OFFSET = /^(.+)\+0x([0-9a-f]+)$/;
const ADDRESS = /^0x([0-9a-f]+)$/;

export class ReplayKernel implements SymbolSource {
  private readonly bases = new Map<string, bigint>();
  private readonly sizes = new Map<string, number>();
  /** ascending symbol starts, for printFrame */
  private readonly starts: bigint[] = [];
  private readonly names: string[] = [];
  /** bracketed markers other than the trampoline: printed as they were */
  private readonly markers = new Map<bigint, string>();

  constructor(stacks: readonly (readonly string[])[]) {
    for (const s of stacks)
      for (const key of s) {
        const m = OFFSET.exec(key);
        const name = m ? m[1] : key;
        if (ADDRESS.test(key) || key === TRAMPOLINE) continue;
        const off = m ? parseInt(m[2], 16) : 0;
        this.sizes.set(name, Math.max(this.sizes.get(name) ?? 0, off + 1));
      }
    let at = BASE;
    for (const [name, maxOff] of [...this.sizes].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const size = Math.ceil((maxOff + 15) / 16) * 16;
      this.sizes.set(name, size);
      this.bases.set(name, at);
      this.starts.push(at);
      this.names.push(name);
      at += BigInt(size + 16);
    }
  }

  ipOf(key: string): bigint {
    if (key === TRAMPOLINE) return TRAMPOLINE_IP;
    const a = ADDRESS.exec(key);
    if (a) return BigInt('0x' + a[1]);
    const m = OFFSET.exec(key);
    const name = m ? m[1] : key;
    const base = this.bases.get(name)!;
    const ip = base + BigInt(m ? parseInt(m[2], 16) : 0);
    if (name.startsWith('[')) this.markers.set(ip, key);
    return ip;
  }

  printFrame(ip: bigint): string {
    if (ip === TRAMPOLINE_IP) return TRAMPOLINE;
    const marker = this.markers.get(ip);
    if (marker) return marker;
    let lo = 0;
    let hi = this.starts.length - 1;
    if (hi < 0 || ip < this.starts[0]) return '0x' + ip.toString(16);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= ip) lo = mid;
      else hi = mid - 1;
    }
    const name = this.names[lo];
    const size = this.sizes.get(name)!;
    const off = ip - this.starts[lo];
    if (off >= BigInt(size)) return '0x' + ip.toString(16);
    return `${name}+0x${off.toString(16)}/0x${size.toString(16)}`;
  }

  kallsyms(): string {
    return this.names.map((n, i) => (n.startsWith('[') ? '' : `${this.starts[i].toString(16)} T ${n}\n`)).join('');
  }
}

/** The replay workload: raw ips per stack (leaf first), their weights, and the symbols. */
export function replayWorkload(src: ReplaySource): { stacks: bigint[][]; weights: number[]; kernel: ReplayKernel } {
  const keep = src.frames.map((f, i) => [f, src.counts[i]] as const).filter(([f, c]) => f.length >= 1 && f.length <= 64 && c > 0);
  const kernel = new ReplayKernel(keep.map(([f]) => f));
  return { stacks: keep.map(([f]) => f.map((k) => kernel.ipOf(k))), weights: keep.map(([, c]) => c), kernel };
}
