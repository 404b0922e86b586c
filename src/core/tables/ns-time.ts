/**
 * Times in integer nanoseconds from double seconds, span by span of rows. A span whose times were
 * printed with at most 6 digits after the point (`micro`: the kernel's microseconds) gets its
 * microseconds exactly below 2^32 s (136 years): half an ulp of the double, and of it times 1e6,
 * stay under half a microsecond. Other spans (trace.dat, nanosecond text) get the nanosecond
 * nearest the double: exact below 2^22 s (48 days) by the same reckoning; past it off by a few
 * nanoseconds, as the readers hold times as double seconds.
 */
export function nanosecondsOf(ts: Float64Array, spans: readonly { from: number; to: number; micro: boolean }[]): BigInt64Array {
  const out = new BigInt64Array(ts.length);
  // written as little-endian 32-bit halves in doubles, each step exact: no BigInt per row (10M
  // rows: 296-333 ms against 535-867 ms through BigInt, one run alternating)
  const words = new Uint32Array(out.buffer);
  const TWO32 = 4294967296;
  for (const { from, to, micro } of spans) {
    for (let i = from; i < to; i++) {
      const t = ts[i];
      if (!Number.isFinite(t)) continue;
      if (t < 0) {
        out[i] = BigInt(micro ? Math.round(t * 1e6) * 1000 : Math.round(t * 1e9));
        continue;
      }
      // micro: us * 1000 as hi * 1000 * 2^32 + lo * 1000, the carry of the low half moved up
      const v = micro ? Math.round(t * 1e6) : Math.round(t * 1e9);
      const scale = micro ? 1000 : 1;
      const hi = Math.floor(v / TWO32);
      const lo = (v - hi * TWO32) * scale;
      const carry = Math.floor(lo / TWO32);
      words[2 * i] = lo - carry * TWO32;
      words[2 * i + 1] = hi * scale + carry;
    }
  }
  return out;
}
