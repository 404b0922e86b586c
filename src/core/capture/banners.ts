import type { Diagnostic } from '../formats/diagnostics.ts';
import type { FileKind } from '../formats/types.ts';
import type { FileReport } from './ingest.ts';

// Imports types only: the page's main thread renders these (src/ui/banner) without the model.

/**
 * A banner's text in pieces, so each front end renders them its own way: numbers with its
 * number format, commands as code, file names set apart.
 */
export type BannerPart = string | { num: number } | { code: string } | { file: string };

export type BannerId =
  | 'not-read'
  | 'trace-dat'
  | 'unrecognized'
  | 'no-trace'
  | 'no-stacks'
  | 'no-dump'
  | 'generation-without-dump'
  | 'no-kallsyms'
  | 'symbols-mismatch'
  | 'stale-ids'
  | 'before-reset'
  | 'sim-truth';

/** What is missing from the capture or unusable in its files, said at the top of the page (DESIGN 5.2 `banner`). */
export interface Banner {
  id: BannerId;
  /** `note`: nothing is wrong with the capture (a file beside it that is not part of one) */
  level: 'note' | 'warn' | 'error';
  /** the files it is about, as named in the load */
  files: string[];
  /** about files of a load in which nothing was understood, which left the capture as it was */
  rejected: boolean;
  title: string;
  body: BannerPart[];
}

/** What the banners are computed from: a Summary has all of it (`derived` only sharpens no-kallsyms). */
export interface BannerInput {
  events: number;
  cookies: number;
  fullStacks: number;
  userStacks: number;
  /** generation numbers seen in the trace or in dumps (a list that may leave some out: generationsCut) */
  generations: number[];
  /** generations `generations` and `derived.generations` leave out (summary.ts) */
  generationsCut?: number;
  files: readonly FileReport[];
  diagnostics: readonly Diagnostic[];
  derived?: { generations: readonly { generation: number | null; cookies: number; dumpFormats: readonly string[] }[] };
  /** v4/v7 ids beyond their slots' ref_counts (v7-evidence.ts) */
  staleIds?: { slots: number; ids: number; excess: number } | null;
  /** v4/v7 ids before the last reset marker in the trace (v7-evidence.ts) */
  beforeReset?: { resets: number; lastTs: number; ids: number; of: number } | null;
  /** a simulated run's ledger.json (sim-truth.ts) */
  simTruth?: { matched: boolean; why: string | null; unverified: number; unverifiedWrong: number; unverifiedRight: number } | null;
}

const TRACE_KINDS: ReadonlySet<FileKind> = new Set<FileKind>(['trace_text', 'systrace_html', 'trace_cmd_dat', 'perf_script']);
const DUMP_KINDS: ReadonlySet<FileKind> = new Set<FileKind>(['stack_map_text', 'stack_map_bin', 'dump_json']);
const TRACEFS = '/sys/kernel/tracing';

const num = (n: number) => ({ num: n });
const code = (s: string) => ({ code: s });
/** `a`, `a and b`, `a, b and c`, each a file part */
function fileList(files: readonly string[]): BannerPart[] {
  const out: BannerPart[] = [];
  files.forEach((f, i) => {
    if (i > 0) out.push(i === files.length - 1 ? ' and ' : ', ');
    out.push({ file: f });
  });
  return out;
}
/** generations a banner names one by one; the rest are counted */
const NAMED_GENERATIONS = 20;

const words = (parts: readonly string[]) => (parts.length < 2 ? parts.join('') : parts.slice(0, -1).join(', ') + ' and ' + parts[parts.length - 1]);
const is = (files: readonly string[]) => (files.length === 1 ? 'is' : 'are');
const has = (files: readonly string[]) => (files.length === 1 ? 'has' : 'have');
const holds = (files: readonly string[]) => (files.length === 1 ? 'holds' : 'hold');

/** Parts joined as one piece of text: `fmt` for numbers, backticks around code. */
export function bannerText(parts: readonly BannerPart[], fmt: (n: number) => string = groupDigits): string {
  return parts.map((p) => (typeof p === 'string' ? p : 'num' in p ? fmt(p.num) : 'code' in p ? '`' + p.code + '`' : p.file)).join('');
}

/** 16384 -> "16,384" (what the page's fmtInt prints), without a locale */
export function groupDigits(n: number): string {
  const s = String(Math.trunc(Math.abs(n)));
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (i > 0 && (s.length - i) % 3 === 0) out += ',';
    out += s[i];
  }
  return (n < 0 ? '-' : '') + out;
}

/** What each kind of unreadable file is, and what to load instead. */
function unreadable(kind: FileKind, files: string[]): { id: BannerId; title: string; what: string; body: BannerPart[] } {
  const F = fileList(files);
  switch (kind) {
    case 'unknown':
      return {
        id: 'unrecognized',
        title: 'Not a format this app reads',
        what: 'not a format this app reads',
        body: [
          ...F,
          ` ${is(files)} not ftrace text, a stack_map or stack_map_bin dump, stack_map_stat, kallsyms or System.map, `,
          'stackmap_dump.py JSON, or an archive of those. Load ',
          code(`${TRACEFS}/trace`),
          ' (or ',
          code('trace-cmd report'),
          ' output) and the stack map files instead.',
        ],
      };
    default:
      return {
        id: 'not-read',
        title: 'Nothing in it could be used',
        what: 'nothing in it could be used',
        body: [
          ...F,
          ` looked like ${kind.replaceAll('_', ' ')} but nothing in ${files.length === 1 ? 'it' : 'them'} could be used: its diagnostics below say why.`,
        ],
      };
  }
}

function byKind(files: readonly FileReport[]): Map<FileKind, string[]> {
  const m = new Map<FileKind, string[]>();
  for (const f of files) {
    let list = m.get(f.kind);
    if (!list) m.set(f.kind, (list = []));
    list.push(f.file);
  }
  return m;
}

/**
 * The banners for a capture (its summary) and, when the last load understood nothing and kept
 * the capture, for that load's files. Pure, so the command line can print the same words
 * (`bannerText`).
 */
export function sessionBanners(s: BannerInput | null, rejected: readonly FileReport[] | null = null): Banner[] {
  const out: Banner[] = [];
  if (rejected?.length) {
    for (const [kind, files] of byKind(rejected)) {
      const { what, ...u } = unreadable(kind, files);
      out.push({
        ...u,
        level: 'error',
        files,
        rejected: true,
        title: `Not loaded: ${what}`,
        body: [...u.body, ' Nothing in this load could be read, so the capture shown is still the one opened before.'],
      });
    }
  }
  if (!s) return out;

  const kinds = byKind(s.files);
  const unknown = kinds.get('unknown');
  if (unknown) {
    // beside files that loaded, a file no reader takes is a note: the capture is there, that file is not part of it
    const others = s.files.some((f) => f.kind !== 'unknown');
    const { what: _, ...u } = unreadable('unknown', unknown);
    if (!others) out.push({ ...u, level: 'error', files: unknown, rejected: false });
    else {
      const index = unknown.filter((f) => f === 'index.json' || f.endsWith('/index.json'));
      out.push({
        id: 'unrecognized',
        level: 'note',
        files: unknown,
        rejected: false,
        title: 'Not read',
        body: [
          ...fileList(unknown),
          ` ${is(unknown)} not a format this app reads, so ${unknown.length === 1 ? 'it was' : 'they were'} left out; the other files loaded.`,
          ...(index.length ? [' (', code('index.json'), ' is how the sample folder lists its files: not part of a capture.)'] : []),
        ],
      });
    }
  }

  const traces = s.files.filter((f) => TRACE_KINDS.has(f.kind)).map((f) => f.file);
  const dumps = s.files.filter((f) => DUMP_KINDS.has(f.kind)).map((f) => f.file);
  const bins = kinds.get('stack_map_bin') ?? [];
  const symbolFiles = kinds.get('kallsyms') ?? [];

  if (traces.length === 0 && dumps.length > 0) {
    out.push({
      id: 'no-trace',
      level: 'warn',
      files: dumps,
      rejected: false,
      title: 'No trace',
      body: [
        ...fileList(dumps),
        ` ${is(dumps)} stack map dump${dumps.length === 1 ? '' : 's'}, but no trace is loaded: the map's stacks are there, `,
        'yet no event to place on the timeline or count. Load the trace read with ',
        dumps.length === 1 ? 'it' : 'them',
        ': ',
        code(`cat ${TRACEFS}/trace > trace`),
        '.',
      ],
    });
  }

  if (traces.length > 0 && s.cookies === 0 && s.fullStacks === 0) {
    out.push({
      id: 'no-stacks',
      level: 'warn',
      files: traces,
      rejected: false,
      title: 'No kernel stacks in the trace',
      body: [
        ...fileList(traces),
        ` ${has(traces)} `,
        num(s.events),
        ` event${s.events === 1 ? '' : 's'} but no kernel stack records (no `,
        code('<stack_id N>'),
        ' ids, no ',
        code('<stack trace>'),
        ' blocks)',
        ...(s.userStacks > 0 ? [', only ', num(s.userStacks), ` user stack${s.userStacks === 1 ? '' : 's'}`] : []),
        ', so there is nothing to count or resolve. Record with kernel stacks and the stack map on: ',
        code(`echo 1 > ${TRACEFS}/options/stacktrace`),
        ' and ',
        code(`echo 1 > ${TRACEFS}/options/stackmap`),
        ' (a kernel without the stack map writes every stack in full, which this app reads too).',
      ],
    });
  }

  if (s.cookies > 0 && dumps.length === 0) {
    const v8 = s.generations.length > 0;
    const more = Math.max(0, s.generations.length - NAMED_GENERATIONS) + (s.generationsCut ?? 0);
    const gens = words([...s.generations.slice(0, NAMED_GENERATIONS).map(String), ...(more ? [`${more.toLocaleString('en-US')} more`] : [])]);
    out.push({
      id: 'no-dump',
      level: 'error',
      files: traces,
      rejected: false,
      title: 'No dump of the stack map',
      body: [
        ...fileList(traces),
        ` ${holds(traces)} `,
        num(s.cookies),
        ` stack id${s.cookies === 1 ? '' : 's'} (`,
        code(v8 ? '<stack_id N gen G>' : '<stack_id N>'),
        v8 ? `, generation${s.generations.length === 1 ? '' : 's'} ${gens}` : '',
        ') and no dump of the map is loaded, so none of them can be turned into its stack. ',
        ...(v8
          ? [
              'Copy ',
              code(`${TRACEFS}/stack_map`),
              ' before each reset (',
              code(`echo 0 > ${TRACEFS}/stack_map`),
              ') and once after the trace stops, one file per generation, and load them with the trace (v8 as posted exports the text ',
              code('stack_map'),
              ' only; ',
              code('stack_map_bin'),
              ' is the proposed follow-up series).',
            ]
          : [
              'Copy ',
              code(`${TRACEFS}/stack_map`),
              ' (or ',
              code('stack_map_bin'),
              ') right after stopping the trace and before any reset ',
              '(a v7 id has no generation: a dump taken after a reset names other stacks), and load it with the trace.',
            ]),
      ],
    });
  } else if (s.cookies > 0 && s.derived) {
    const missing = s.derived.generations.filter((g) => g.generation !== null && g.cookies > 0 && g.dumpFormats.length === 0);
    if (missing.length) {
      const body: BannerPart[] = [...fileList(traces), ` ${has(traces)} ids of generation${missing.length === 1 ? '' : 's'} `];
      // the first few by name; the rest (and the generations the list left out) counted
      const named = missing.slice(0, NAMED_GENERATIONS);
      const more = missing.length - named.length;
      const cut = s.generationsCut ?? 0;
      const last = named.length - 1 + (more || cut ? 1 : 0);
      named.forEach((g, i) => {
        if (i > 0) body.push(i === last ? ' and ' : ', ');
        body.push(`${g.generation} (`, num(g.cookies), ` id${g.cookies === 1 ? '' : 's'})`);
      });
      if (more || cut) {
        body.push(' and ');
        body.push(
          ...(more ? [num(more), ' more'] : []),
          ...(cut ? [more ? ' (and perhaps some of the ' : 'perhaps some of the ', num(cut), ` generations the list leaves out${more ? ')' : ''}`] : []),
        );
      }
      body.push(
        ` with no dump of ${missing.length === 1 ? 'that generation' : 'those generations'} among `,
        ...fileList(dumps),
        ', so they stay unresolved. A generation\u2019s dump has to be copied before the reset that ends it (',
        code(`cat ${TRACEFS}/stack_map`),
        ' before ',
        code(`echo 0 > ${TRACEFS}/stack_map`),
        '); load it if you have it.',
      );
      out.push({ id: 'generation-without-dump', level: 'warn', files: traces, rejected: false, title: 'Generations without a dump', body });
    }
  }

  const zeroSymbols = new Set(s.diagnostics.filter((d) => d.message.includes('read without privilege')).map((d) => d.file));
  const usableSymbols = symbolFiles.filter((f) => !zeroSymbols.has(f));
  if (bins.length > 0 && usableSymbols.length === 0) {
    // generations whose stacks are raw addresses: a binary dump and no text dump to name them
    const raw = s.derived?.generations.filter((g) => g.dumpFormats.includes('stack_map_bin') && !g.dumpFormats.includes('stack_map_text'));
    if (!raw || raw.length > 0) {
      const numbered = (raw ?? []).filter((g) => g.generation !== null).map((g) => String(g.generation));
      const whose =
        numbered.length > 0
          ? `the stacks of generation${numbered.length === 1 ? '' : 's'} ${words(numbered)}`
          : `${bins.length === 1 ? 'its' : 'their'} stacks`;
      const zero = symbolFiles.filter((f) => zeroSymbols.has(f));
      out.push({
        id: 'no-kallsyms',
        level: 'warn',
        files: [...bins, ...zero],
        rejected: false,
        title: 'Binary dumps without kallsyms',
        body: [
          ...fileList(bins),
          ` ${holds(bins)} raw kernel addresses and no kallsyms is loaded`,
          ...(zero.length ? [' (', ...fileList(zero), ` ${holds(zero)} only zero addresses: read without root)`] : []),
          `: ${whose} show as hex addresses`,
          ...(s.fullStacks > 0
            ? [
                ', and the trace\u2019s ',
                num(s.fullStacks),
                ` full stack${s.fullStacks === 1 ? '' : 's'} (fallbacks), which name their functions, `,
                'cannot be matched with the dumps\u2019 stacks, so a stack recorded both ways counts twice in unique stacks',
              ]
            : []),
          '. Copy the symbols as root on the traced machine, in the same boot: ',
          code('sudo cat /proc/kallsyms > kallsyms'),
          ', and load that file with the dumps.',
        ],
      });
    }
  }

  const mismatched = s.diagnostics.filter((d) => d.message.includes('fall outside every symbol')).map((d) => d.file);
  if (mismatched.length) {
    out.push({
      id: 'symbols-mismatch',
      level: 'warn',
      files: mismatched,
      rejected: false,
      title: 'Symbols that do not match the dumps',
      body: [
        'Most addresses in the binary dumps fall outside every symbol in ',
        ...fileList(mismatched),
        ': it is probably from another boot, or KASLR is on (a System.map only matches with nokaslr), so those frames stay hex addresses. ',
        'Load ',
        code('/proc/kallsyms'),
        ' read as root on the traced machine during the same boot.',
      ],
    });
  }

  const truth = s.simTruth;
  const ledgers = kinds.get('sim_ledger') ?? [];
  if (truth && !truth.matched) {
    out.push({
      id: 'sim-truth',
      level: 'warn',
      files: ledgers,
      rejected: false,
      title: 'A ledger that is not this trace\u2019s',
      body: [...fileList(ledgers), ` does not line up with the trace (${truth.why}): it is from another run, so it says nothing of these ids.`],
    });
  } else if (truth && truth.unverifiedWrong > 0) {
    out.push({
      id: 'sim-truth',
      level: 'warn',
      files: ledgers,
      rejected: false,
      title: 'Unverified ids that are wrong, as the simulator knows',
      body: [
        'Of the trace\u2019s ',
        num(truth.unverified),
        ` unverified id${truth.unverified === 1 ? '' : 's'} (v7: no generation to check), `,
        ...fileList(ledgers),
        ' says ',
        num(truth.unverifiedWrong),
        ' resolve to another stack than the one they were written for, and ',
        num(truth.unverifiedRight),
        ' to their own. Only the simulator knows which: nothing in a real capture tells them apart.',
      ],
    });
  }

  // Two readings of one fact, ids written before a reset: the dump's ref_counts outnumbered
  // (stale-ids) and the trace's own reset markers (before-reset). With both, one banner says both.
  const stale = s.staleIds;
  const staleParts: BannerPart[] =
    stale && stale.excess > 0
      ? [
          num(stale.ids),
          ` id${stale.ids === 1 ? '' : 's'} (`,
          code('<stack_id N>'),
          ') name ',
          num(stale.slots),
          ` slot${stale.slots === 1 ? '' : 's'} more often than the dump’s `,
          code('ref_count'),
          ' says their stack was recorded there: at least ',
          num(stale.excess),
          ` of them ${stale.excess === 1 ? 'was' : 'were'} written before a reset, for whatever held the slot then, and may resolve to another stack. `,
        ]
      : [];
  const before = s.beforeReset;
  if (before && before.ids > 0) {
    out.push({
      id: 'before-reset',
      level: 'warn',
      files: staleParts.length ? [...traces, ...dumps] : traces,
      rejected: false,
      title: staleParts.length ? 'Ids from before a reset' : 'Ids recorded before a reset the trace shows',
      body: [
        'The trace marks ',
        num(before.resets),
        ` reset${before.resets === 1 ? '' : 's'} of the stack map (`,
        code('stackmap reset'),
        ' written to trace_marker), the last at ',
        code(before.lastTs.toFixed(6)),
        ' s. ',
        num(before.ids),
        ' of its ',
        num(before.of),
        ` id${before.of === 1 ? '' : 's'} (`,
        code('<stack_id N>'),
        `) ${before.ids === 1 ? 'was' : 'were'} recorded before it, for the map as it was then: `,
        'a dump read after the reset may hold another stack in their slots, and v7 cannot tell. ',
        ...(staleParts.length ? ['The dump agrees: ', ...staleParts] : []),
        'Resolve them against the dump saved before that reset.',
      ],
    });
  } else if (staleParts.length) {
    out.push({
      id: 'stale-ids',
      level: 'warn',
      files: [...traces, ...dumps],
      rejected: false,
      title: 'Ids from before a reset',
      body: [
        ...staleParts,
        'A v7 id carries no generation, so nothing tells which ones (if the dump was read after the trace stopped). ',
        'Dump ',
        code(`${TRACEFS}/stack_map`),
        ' before each reset, or use v8, whose cookie carries its generation.',
      ],
    });
  }
  return out;
}
