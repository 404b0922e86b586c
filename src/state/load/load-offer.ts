import type { Diagnostic } from '../../core/formats/diagnostics.ts';
import { SNIFF_BYTES, sniffKind } from '../../core/formats/sniff.ts';
import type { FileKind } from '../../core/formats/types.ts';
import { unpack } from '../../core/unpack/unpack.ts';
import type { FileReport, NamedBlob } from '../../workers/ingest-api.ts';
import type { LoadMode } from './load-types.ts';

/**
 * What kinds of file a load brings, for load-store.ts: the Add-or-Replace suggestion for files
 * offered over a capture of the user's, and the words for the files of a load in which nothing
 * could be read.
 */

/** What part of a capture a kind of file provides. */
const PART: Partial<Record<FileKind, 'trace' | 'dump' | 'stat' | 'symbols'>> = {
  trace_text: 'trace',
  systrace_html: 'trace',
  perf_script: 'trace',
  stack_map_text: 'dump',
  stack_map_bin: 'dump',
  dump_json: 'dump',
  stack_map_stat: 'stat',
  kallsyms: 'symbols',
};

/** Add when the new files provide a part the capture lacks (a trace, then its dumps), else Replace. */
export function suggestMode(have: readonly FileKind[], incoming: readonly FileKind[]): LoadMode {
  const parts = new Set(have.map((k) => PART[k]));
  return incoming.some((k) => PART[k] !== undefined && !parts.has(PART[k])) ? 'add' : 'replace';
}

/** The kinds of the files (of each member of an archive, from its first MB), sniffed from their first bytes as the worker will. */
export async function sniffKinds(files: readonly NamedBlob[]): Promise<FileKind[]> {
  const kinds: FileKind[] = [];
  for (const f of files) {
    for await (const inner of unpack({ name: f.name, blob: f.blob.slice(0, 1 << 20) }, () => {})) {
      const reader = inner.stream.getReader();
      const parts: Uint8Array[] = [];
      let n = 0;
      while (n < SNIFF_BYTES) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        n += value.length;
      }
      await reader.cancel().catch(() => {});
      const head = new Uint8Array(n);
      let o = 0;
      for (const p of parts) {
        head.set(p, o);
        o += p.length;
      }
      kinds.push(sniffKind(head));
    }
  }
  return kinds;
}

const KIND_WORDS: Partial<Record<FileKind, string>> = {
  trace_cmd_dat: 'a trace-cmd trace.dat',
  perf_script: '`perf script` output',
  unknown: 'not a format this page reads',
};
/** "trappy-trace.dat (a trace-cmd trace.dat), noise (not a format this page reads)" */
export const describeRejected = (files: readonly FileReport[], diagnostics: readonly Diagnostic[] = []) => {
  const named = files.map((f) => `${f.file} (${KIND_WORDS[f.kind] ?? f.kind}${f.size === 0 ? ', empty' : ''})`);
  // files with no report: nothing of them could be read at all (a folder, a file gone), their diagnostic says why
  const seen = new Set(files.map((f) => f.file));
  for (const d of diagnostics) {
    if (seen.has(d.file)) continue;
    seen.add(d.file);
    named.push(`${d.file} (${d.message})`);
  }
  return named.join(', ');
};
