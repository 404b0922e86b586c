import { groupDigits } from '../capture/banners.ts';
import type { ExplorerData } from './explorer-data.ts';
import { generationInfos } from './overview.ts';
import type { Warning } from './api.ts';
import { RecordStatus } from '../capture/trace-columns-data.ts';
import { statusTally } from '../capture/summary.ts';

/** local copies: an imported binding can cost a getter call per access under module transforms (tsx, vitest) */
const { Ambiguous: AMBIGUOUS, NoDump: NO_DUMP, NoSlot: NO_SLOT, Unverified: UNVERIFIED } = RecordStatus;

export const NEARLY_FULL = 0.9;
/** unresolved cookies above this share of all cookies are "many" */
export const MANY_UNRESOLVED = 0.05;

const pct = (x: number) => (x > 0 && x * 100 < 0.05 ? '<0.1' : x * 100 >= 99.95 && x < 1 ? '99.9' : (x * 100).toFixed(x * 100 < 10 ? 1 : 0));
const plural = (n: number, one: string, many = one + 's') => `${groupDigits(n)} ${n === 1 ? one : many}`;
const int = groupDigits;

/** generations without a dump named one by one in the warning; the rest are counted */
const MISSING_NAMED = 20;

/** What the capture says the user should do something about, in words they can act on. */
export function warnings(d: ExplorerData): Warning[] {
  const out: Warning[] = [];
  const c = d.capture;
  const stat = c.stats.length ? c.stats[c.stats.length - 1] : null;

  if (stat && stat.entries !== null && stat.capacity) {
    const fill = stat.entries / stat.capacity;
    if (fill >= NEARLY_FULL) {
      out.push({
        level: fill >= 1 ? 'error' : 'warn',
        id: 'map-nearly-full',
        message:
          `The stack map is ${pct(fill)}% full (${int(stat.entries)} of ${int(stat.capacity)} entries${stat.generation !== null ? `, generation ${stat.generation}` : ''}). ` +
          'Stacks not yet in it can no longer be stored and are written in full, which takes more ring-buffer space. ' +
          (stat.generation !== null
            ? 'Reset the map between runs (echo 0 > stack_map); v8 as posted has a fixed capacity of 16,384 stacks (a larger map is the proposed follow-up series).'
            : 'Reset the map between runs (echo 0 > stack_map) or use a larger map (ftrace_stackmap.bits=N on the kernel command line, up to 18).'),
      });
    }
  }

  if (stat && stat.drops !== null && stat.drops > 0) {
    const n = stat.drops;
    const of = stat.successes !== null ? `, ${pct(n / (n + stat.successes))}% of inserts` : '';
    const full = stat.entries !== null && stat.capacity !== null && stat.capacity > 0 && stat.entries >= stat.capacity;
    const fill = stat.entries !== null && stat.capacity !== null ? ` (${int(stat.entries)} of ${int(stat.capacity)} elements in use)` : '';
    const gravestones =
      'once the element pool is used up, each insert that claims a slot leaves it claimed but empty (a gravestone): ' +
      'later inserts probe past it, so probes get longer until the map is reset.';
    let message: string;
    if (stat.version === 'v7') {
      message = full
        ? `${plural(n, 'stack')} did not fit in the map (drops${of}) and were written in full: the map is full${fill}, and ${gravestones} ` +
          'Reset the map (echo 0 > stack_map) before a long trace, or use a larger map (ftrace_stackmap.bits).'
        : `${plural(n, 'stack')} were dropped (drops${of}) and written in full although the map is not full${fill}: ` +
          'their probes ran past 64 slots, in a crowded stretch of the table. Nothing is lost; they cost ring-buffer space. ' +
          `It gets worse when the pool runs out: ${gravestones}`;
    } else {
      message = full
        ? `${plural(n, 'stack')} fell back to full records (fallbacks${of}): the map is full${fill}, so every new stack is written ` +
          `in full, and ${gravestones} Reset it between runs.`
        : `${plural(n, 'stack')} fell back to full records (fallbacks${of}). The map is not full${fill}, so these are ` +
          'inserts that met the same stack being inserted by another CPU (v8 writes it in full rather than wait), or long probes. ' +
          'Nothing is lost; they cost ring-buffer space.';
    }
    out.push({ level: stat.version === 'v7' || full ? 'warn' : 'info', id: 'drops', message });
  }

  // the cookies by status, counted once per capture (the summary reads the same tally)
  const tally = statusTally(c);
  const unverified = tally.cookieStatus[UNVERIFIED];
  const ambiguous = tally.cookieStatus[AMBIGUOUS];
  const noDump = tally.cookieStatus[NO_DUMP];
  const noSlot = tally.cookieStatus[NO_SLOT];
  const cookies = tally.cookies;

  if (unverified > 0) {
    out.push({
      level: 'warn',
      id: 'v7-reset-risk',
      message:
        `${plural(unverified, 'v7 stack id')} ${unverified === 1 ? 'was' : 'were'} matched against a dump without a generation. ` +
        'If the map was reset between the trace and the dump, a slot may hold an unrelated stack and these stacks are wrong. ' +
        'Take the dump right after stopping the trace with no reset in between; v8 kernels rule this out with generation cookies.',
    });
  }

  if (ambiguous > 0) {
    out.push({
      level: 'warn',
      id: 'ambiguous-ids',
      message:
        `${plural(ambiguous, 'v7 stack id')} ${ambiguous === 1 ? 'is' : 'are'} ambiguous: the ${c.dumps.generationless.length} dumps without a generation ` +
        'disagree on what their slots hold, so none is used. Load only the dump taken together with this trace.',
    });
  }

  // a text dump whose records carry several generations was read across a reset
  const across = new Map<string, Set<number>>();
  for (const gd of c.dumps.byGeneration.values()) {
    for (const s of gd.sources) {
      const src = c.dumps.sources[s];
      if (src.format !== 'stack_map_text') continue;
      let set = across.get(src.file);
      if (!set) across.set(src.file, (set = new Set()));
      set.add(gd.generation);
    }
  }
  const acrossFiles = new Set<string>();
  for (const [file, gens] of across) {
    if (gens.size < 2) continue;
    acrossFiles.add(file);
    out.push({
      level: 'warn',
      id: 'text-dump-across-reset',
      message:
        `${file} (stack_map text) holds records of generations ${[...gens].sort((a, b) => a - b).join(', ')}: it was read while the map was being reset. ` +
        'Each record keeps its own generation, but the older generation is incomplete and its cookies may not resolve. ' +
        'Read the text dump with no reset running, or use stack_map_bin.',
    });
  }
  for (const diag of c.diagnostics) {
    if (acrossFiles.has(diag.file) || !/read across a reset/.test(diag.message)) continue;
    out.push({
      level: 'warn',
      id: 'text-dump-across-reset',
      message: `${diag.file}: ${diag.message}. Read the text dump with no reset running, or use stack_map_bin.`,
    });
  }

  const infos = generationInfos(d);
  const missing = infos.list.filter((g) => g.generation !== 'none' && g.cookies > 0 && g.dumpKinds.length === 0);
  if (missing.length) {
    // the first few by name, the rest counted (a trace can name a million generations)
    const named = missing.slice(0, MISSING_NAMED).map((g) => `${g.generation} (${plural(g.cookies, 'cookie')})`);
    if (missing.length > MISSING_NAMED) named.push(`${plural(missing.length - MISSING_NAMED, 'more generation')}`);
    if (infos.cut) named.push(`and perhaps some of the ${plural(infos.cut, 'generation')} the generation list leaves out`);
    const list = named.join(', ');
    out.push({
      level: 'warn',
      id: 'generation-without-dump',
      message:
        `No dump was loaded for generation${missing.length > 1 ? 's' : ''} ${list}, so ${missing.length > 1 ? 'their' : 'its'} cookies cannot be resolved. ` +
        "A generation's dump must be read before the reset that ends it (cat stack_map_bin before echo 0 > stack_map); load it if you have it.",
    });
  }

  for (const diag of c.diagnostics) {
    if (/fall outside every symbol/.test(diag.message)) {
      out.push({
        level: 'warn',
        id: 'symbols-mismatch',
        message: `The symbols in ${diag.file} do not match the dump: ${diag.message}. Load /proc/kallsyms read as root on the traced machine during the same boot; stacks show raw addresses until then.`,
      });
    } else if (/read without privilege/.test(diag.message)) {
      out.push({
        level: 'warn',
        id: 'symbols-mismatch',
        message: `${diag.file} has only zero addresses: it was read without privilege and cannot name any frame. Read /proc/kallsyms as root (or set kernel.kptr_restrict=0) on the traced machine.`,
      });
    }
  }

  // cookies without a stack (summarize()'s `unresolved`)
  const unresolved = noDump + noSlot + ambiguous;
  if (cookies > 0 && unresolved > 0 && unresolved / cookies >= MANY_UNRESOLVED) {
    const parts: string[] = [];
    if (noDump) parts.push(`${int(noDump)} ${noDump === 1 ? 'has' : 'have'} no dump of ${noDump === 1 ? 'its' : 'their'} generation loaded`);
    if (noSlot)
      parts.push(
        `${int(noSlot)} ${noSlot === 1 ? 'names' : 'name'} a slot the dump lacks (stacks first stored after the dump was read: read the dump after stopping the trace)`,
      );
    if (ambiguous) parts.push(`${int(ambiguous)} ${ambiguous === 1 ? 'is' : 'are'} ambiguous`);
    out.push({
      level: unresolved / cookies >= 0.5 ? 'error' : 'warn',
      id: 'unresolved',
      message: `${int(unresolved)} of ${int(cookies)} cookies (${pct(unresolved / cookies)}%) have no stack: ${parts.join('; ')}. Their events count in the timeline but not in top stacks or flame graphs.`,
    });
  }
  return out;
}
