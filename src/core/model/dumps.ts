import type { DiagnosticLog } from '../formats/diagnostics.ts';
import { addressKey } from '../formats/frames.ts';
import type { ParsedDump } from '../formats/types.ts';
import type { StackTable } from './stack-table.ts';

export interface DumpSlot {
  stack: number;
  refCount: number;
  /** index into DumpIndex.sources of the dump this slot came from first */
  source: number;
}

export interface DumpSource {
  file: string;
  format: ParsedDump['format'];
  version: string;
  generation: number | null;
  records: number;
}

/** A generation's map as rebuilt from every dump of it (text and binary merged slot by slot). */
export interface GenerationDump {
  generation: number;
  slots: Map<number, DumpSlot>;
  sources: number[];
}

/** A dump with no generation (bin v1, v7 text, dump JSON): kept apart, since none can be paired. */
export interface GenerationlessDump {
  source: number;
  slots: Map<number, DumpSlot>;
}

/** Turns a raw ip into a frame key; without symbols, the address itself. */
export type Symbolize = (ip: bigint) => string;

const isAddressFrame = (f: string) => f.startsWith('0x');

export class DumpIndex {
  readonly sources: DumpSource[] = [];
  readonly byGeneration = new Map<number, GenerationDump>();
  readonly generationless: GenerationlessDump[] = [];

  constructor(private readonly stacks: StackTable) {}

  add(dump: ParsedDump, diagnostics: DiagnosticLog, symbolize: Symbolize = addressKey): void {
    const source = this.sources.length;
    this.sources.push({
      file: dump.file,
      format: dump.format,
      version: dump.version,
      generation: dump.generation,
      records: dump.records.length,
    });
    let own: GenerationlessDump | null = null;
    for (const rec of dump.records) {
      const frames = rec.frames ?? (rec.ips ? Array.from(rec.ips, symbolize) : []);
      const slot: DumpSlot = { stack: this.stacks.intern(frames), refCount: rec.refCount, source };
      if (rec.generation === null) {
        if (!own) {
          own = { source, slots: new Map() };
          this.generationless.push(own);
        }
        if (own.slots.has(rec.slot)) diagnostics.atLine(rec.where, `slot ${rec.slot} appears twice in one dump; the first is kept`);
        else own.slots.set(rec.slot, slot);
        continue;
      }
      let gen = this.byGeneration.get(rec.generation);
      if (!gen) {
        gen = { generation: rec.generation, slots: new Map(), sources: [] };
        this.byGeneration.set(rec.generation, gen);
      }
      if (!gen.sources.includes(source)) gen.sources.push(source);
      const prev = gen.slots.get(rec.slot);
      if (!prev) {
        gen.slots.set(rec.slot, slot);
        continue;
      }
      this.merge(gen, rec.slot, prev, slot, diagnostics, dump.format === 'stack_map_bin' ? 'offset' : 'line', rec.where);
    }
  }

  /** Two dumps of one generation hold the same slot: keep the symbolized stack, report a disagreement. */
  private merge(
    gen: GenerationDump,
    slotNo: number,
    prev: DumpSlot,
    next: DumpSlot,
    diagnostics: DiagnosticLog,
    unit: 'line' | 'offset',
    where: number,
  ): void {
    if (prev.source === next.source) {
      report(diagnostics, unit, where, `generation ${gen.generation} slot ${slotNo} appears twice in one dump; the first is kept`);
      return;
    }
    // ref_count is not a payload snapshot: a later read may count more; keep the larger
    prev.refCount = Math.max(prev.refCount, next.refCount);
    if (prev.stack === next.stack) return;
    const a = this.stacks.framesOf(prev.stack);
    const b = this.stacks.framesOf(next.stack);
    const aRaw = a.every(isAddressFrame);
    const bRaw = b.every(isAddressFrame);
    if (a.length === b.length && aRaw !== bRaw) {
      // one side only lacks symbols: same stack, keep the readable one
      if (aRaw) prev.stack = next.stack;
      return;
    }
    const other = this.sources[prev.source].file;
    report(
      diagnostics,
      unit,
      where,
      `generation ${gen.generation} slot ${slotNo} disagrees with ${other} (depth ${b.length} vs ${a.length}); ${other} is kept`,
    );
  }

  /** Every generation number any dump holds, sorted. */
  generations(): number[] {
    return [...this.byGeneration.keys()].sort((x, y) => x - y);
  }
}

function report(d: DiagnosticLog, unit: 'line' | 'offset', where: number, message: string): void {
  if (unit === 'line') d.atLine(where, message);
  else d.atOffset(where, message);
}
