import { Ingest, type Capture } from '../capture/ingest.ts';

/** Ingests named files (strings or bytes), each pushed in chunks of `chunk` bytes (0: whole). */
export function ingestFiles(files: Iterable<[string, string | Uint8Array]>, chunk = 0): Capture {
  const ingest = new Ingest();
  const enc = new TextEncoder();
  for (const [name, content] of files) {
    const bytes = typeof content === 'string' ? enc.encode(content) : content;
    const p = ingest.open(name);
    if (chunk <= 0) p.push(bytes);
    else for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
    p.end();
  }
  return ingest.finish();
}

/** The trace's `tracing_mark_write: stackmap reset N` lines, counted in its text (0 for a trace.dat). */
export function resetMarkLines(files: Map<string, Uint8Array>): number {
  const trace = files.get('trace');
  return trace
    ? new TextDecoder()
        .decode(trace)
        .split('\n')
        .filter((l) => l.includes(': tracing_mark_write: stackmap reset ')).length
    : 0;
}

/** A printed time `S.F` in nanoseconds, by decimal digits in BigInt (no double on the way): the second method for ts_ns. */
export function printedNs(time: string): bigint {
  const [sec, frac = ''] = time.split('.');
  return BigInt(sec) * 1_000_000_000n + BigInt((frac + '000000000').slice(0, 9));
}
