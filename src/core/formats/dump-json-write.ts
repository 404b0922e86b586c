/** Writer for `stackmap_dump.py --json` dumps (the inverse of dump-json.ts). */

export interface DumpJsonRecordInput {
  slot: number;
  refCount: number;
  /** raw ips, leaf first */
  ips: BigUint64Array | readonly bigint[];
  /** one printed frame per ip; absent: no `symbols` key */
  symbols?: readonly string[] | null;
}

export interface DumpJsonOptions {
  /** wrap the list as `{"stacks": [...]}` (default false: a bare list) */
  wrap?: boolean;
  /** JSON.stringify indentation (default 2) */
  indent?: number;
}

/** `[{"stack_id": S, "ref_count": N, "ips": ["0x..."], "symbols"?: [...]}, ...]`, newline-terminated. */
export function writeDumpJson(records: readonly DumpJsonRecordInput[], opts: DumpJsonOptions = {}): string {
  const list = records.map((r) => {
    const o: Record<string, unknown> = {
      stack_id: r.slot,
      ref_count: r.refCount,
      ips: Array.from(r.ips, (ip) => '0x' + ip.toString(16)),
    };
    if (r.symbols) o.symbols = [...r.symbols];
    return o;
  });
  return JSON.stringify(opts.wrap ? { stacks: list } : list, null, opts.indent ?? 2) + '\n';
}
