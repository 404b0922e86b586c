import { SmallInts } from '../base/growable.ts';

/**
 * What an event line says beyond the columns the panes use: its TGID (the `(  1234)` column of
 * `trace` with options/record-tgid, -1 where the line has none or `(-------)`) and its payload as
 * printed (`call_site=... ptr=... bytes_req=...`), one entry per event in event order.
 *
 * Kept only when a load asks for it (LoadOptions.details: the command line's export), since a
 * payload is most of a line's bytes: a session without it holds no per-event text.
 */
export class EventDetails {
  readonly tgid: SmallInts;
  readonly payload: string[];

  constructor(tgid = new SmallInts(), payload: string[] = []) {
    this.tgid = tgid;
    this.payload = payload;
  }

  get length(): number {
    return this.payload.length;
  }

  push(tgid: number, payload: string): void {
    this.tgid.push(tgid);
    this.payload.push(payload);
  }

  truncate(n: number): void {
    this.tgid.truncate(n);
    this.payload.length = n;
  }

  trim(): void {
    this.tgid.trim();
  }

  /** A read-only view of the details so far: later pushes and truncates here do not show in it. */
  frozen(): EventDetails {
    return new EventDetails(this.tgid.frozen(), this.payload.slice());
  }
}
