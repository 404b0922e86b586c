/**
 * The records that keep their own time and CPU (TraceColumns' `ownRec`, ascending), walked in
 * record order: a pass over the records reads each one's time and CPU from its own row or its
 * event's without the derived per-record columns (8 + 4 bytes a record made and gathered).
 */
export class OwnRows {
  private k = 0;
  constructor(private readonly rows: Int32Array) {}

  /** The own row of record `r`, -1 for none; `r` at least the last one asked. */
  rowOf(r: number): number {
    const rows = this.rows;
    let k = this.k;
    while (k < rows.length && rows[k] < r) k++;
    this.k = k;
    return k < rows.length && rows[k] === r ? k : -1;
  }
}
