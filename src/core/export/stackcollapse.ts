import { frameFunction } from '../formats/frames.ts';
import { isPerfOnly } from '../capture/function-tree.ts';
import type { ExplorerData } from '../query/explorer-data.ts';
import type { Selection } from '../query/api.ts';
import { isOccurrence } from '../query/selection.ts';

/**
 * The folded stacks FlameGraph's `stackcollapse-perf.pl` prints with its default options, line
 * for line, from the capture's samples (the tests run the script itself on the same files):
 *
 * - one line per distinct `COMM;root;...;leaf`, the process name first with blanks made `_`;
 * - frames by function (the `+0x..` offset dropped), an `a->b->c` frame (perf's inlined or
 *   unfolded names) as three frames, those after the first marked `_[i]`;
 * - names tidied as its `tidy_generic` does: `;` made `:`, everything from the first `(` that
 *   does not open `(anonymous namespace)` dropped (unless the name has `.(...).`, as Go's do), `"`
 *   and `'` deleted; and `tidy_java`: for a process whose name starts with `java`, a leading `L`
 *   dropped from a name with a `/`;
 * - weighted by the sample's period where perf printed one, else 1;
 * - only samples of the first event the input names (its default `--event-filter`);
 * - a sample without callchain lines still makes a line (its process name alone);
 * - sorted as perl's `sort { $a cmp $b }` does: by code point.
 *
 * - a file's last sample when no blank line ends it is not counted (the script counts a sample
 *   at the blank line after it; perf prints one after every sample, so such a file was cut).
 *
 * Where this differs from the script: a header with fields after the event (`perf script -F
 * ...,trace`) keeps its period and event (the script counts it as 1 and does not filter it by
 * event); several files are read one by one (the script reads them as one stream). Samples without
 * a stack count only in a capture that is all perf script (an ftrace event without a stack record
 * is not a sample).
 */
export function exportStackcollapse(d: ExplorerData, sel: Selection): string {
  const tasks = d.t.tasks.strings;
  const ev = d.ev;
  if (ev.ts.length === 0) return '';
  const firstEvent = ev.name[0];
  const frameless = isPerfOnly(d.capture.files);
  const weights = d.t.evWeight.raw();
  const frames = d.stacks.frames.strings;
  // one folded function list per frame string, made once
  const parts = new Map<number, string[]>();
  const partsOf = (frame: number, java: boolean): string[] => {
    const key = java ? -1 - frame : frame;
    let p = parts.get(key);
    if (!p) {
      p = frameFunction(frames[frame])
        .split('->')
        .map((f, i) => {
          let t = tidyGeneric(f);
          if (java && t.includes('/') && t.startsWith('L')) t = t.slice(1);
          return i > 0 && !t.includes('_[i]') ? t + '_[i]' : t;
        });
      parts.set(key, p);
    }
    return p;
  };
  // the last sample of a file that ends inside it: the script only counts a sample a blank line ends
  const cut = new Set<number>();
  const starts = d.t.fileStarts;
  starts.forEach((s, i) => {
    if (!d.capture.files.some((r) => r.file === s.file && r.unterminated)) return;
    const end = i + 1 < starts.length ? starts[i + 1].events : ev.ts.length;
    if (end > s.events) cut.add(end - 1);
  });
  const sums = new Map<string, number>();
  d.eachEvent(sel, (e) => {
    if (ev.name[e] !== firstEvent || cut.has(e)) return;
    const r = ev.record[e];
    const has = r >= 0 && isOccurrence(d.rec.status[r]) && d.rec.stack[r] >= 0;
    if (!has && !frameless) return;
    const comm = tasks[ev.task[e]].replace(/ /g, '_');
    const java = comm.startsWith('java');
    const path: string[] = [];
    if (has) for (let n = d.rec.stack[r]; n > 0; n = d.node.parent[n]) path.push(...partsOf(d.node.frame[n], java).slice().reverse());
    path.push(comm);
    const line = path.reverse().join(';');
    sums.set(line, (sums.get(line) ?? 0) + weights[e]);
  });
  const lines = [...sums.keys()].sort(byCodePoint);
  return lines.map((l) => `${l} ${sums.get(l)}\n`).join('');
}

/** stackcollapse-perf.pl's tidy_generic, without its regexes (linear in the name). */
export function tidyGeneric(name: string): string {
  let f = name.replace(/;/g, ':');
  // `s/\((?!anonymous namespace\)).*//` unless the name matches `\.\(.*\)\.`
  const dotParen = f.indexOf('.(');
  const goStyle = dotParen >= 0 && f.lastIndexOf(').') >= dotParen + 2;
  if (!goStyle) {
    for (let i = f.indexOf('('); i >= 0; i = f.indexOf('(', i + 1)) {
      if (f.startsWith('anonymous namespace)', i + 1)) continue;
      f = f.slice(0, i);
      break;
    }
  }
  return f.replace(/["']/g, '');
}

/** Perl's string `cmp` on text read as bytes: UTF-8 byte order, which is code point order. */
function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate (a code point above U+FFFF) sorts above every other UTF-16 unit
    const hx = x >= 0xd800 && x <= 0xdfff;
    const hy = y >= 0xd800 && y <= 0xdfff;
    if (hx !== hy) return hx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
