import { MAX_WORKLOAD_DEPTH, MODES } from '../../core/sim/map-layout.ts';
import { LIMITS } from '../../core/sim/sim-options.ts';
import { DEFAULT_SETTINGS, INTERRUPT_RATES, PHASE_SHIFTS, RCU_SHARES, RING_KBS, SPEEDS, WINDOWS, type SimSettings } from './sim-settings.ts';

/**
 * The simulator's settings <-> the query string, beside the explorer's view (view-url.ts) and the
 * pane (`view=simulator`, sim-pane.ts). Keys are prefixed `sim.` so they never meet the view's
 * (`cpus`, `window`, `theme` are the explorer's). Only settings that differ from the defaults are
 * written; a value that is unknown, out of range or not one of the pane's choices is not taken
 * (the default stands) and named in the pane's notice (parseSimSettingsNoted, ignoredNotice).
 */

export const SIM_KEYS = [
  'sim.mode',
  'sim.workload',
  'sim.bits',
  'sim.cpus',
  'sim.stacks',
  'sim.zipf',
  'sim.depth',
  'sim.speed',
  'sim.window',
  'sim.ring',
  'sim.seed',
  'sim.v8',
  'sim.rcu',
  'sim.phase',
  'sim.irq',
  'sim.nmi',
] as const;

const num = (s: string | null) => (s === null || s.trim() === '' ? NaN : Number(s));
const fmt = (n: number) => n.toLocaleString('en');
const choices = (list: readonly (readonly [number, string])[] | readonly number[]) => list.map((x) => (Array.isArray(x) ? x[0] : x)).join(', ');

/** The URL's largest population: 100,000 stacks (x 80 frames, LIMITS.populationFrames). */
export const URL_MAX_STACKS = Math.min(100_000, LIMITS.populationFrames / MAX_WORKLOAD_DEPTH);

/** A `sim.*` value the page did not take, and what it takes instead. */
export interface IgnoredSetting {
  key: string;
  value: string;
  takes: string;
}

/**
 * The settings a query string carries (only the valid ones), and the `sim.*` values it did not
 * take (unknown keys, values out of range or not among the pane's choices), each with what the
 * key takes, for the pane's notice. `maxCpus` is this machine's limit.
 */
export function parseSimSettingsNoted(search: string, maxCpus: number): { settings: Partial<SimSettings>; ignored: IgnoredSetting[] } {
  const q = new URLSearchParams(search);
  const out: Partial<SimSettings> = {};
  const ignored: IgnoredSetting[] = [];
  /** reads `key` with `parse` (null: not taken), noting a value that is there but not taken */
  const take = <T>(key: (typeof SIM_KEYS)[number], takes: string, parse: (v: string) => T | null): T | null => {
    const v = q.get(key);
    if (v === null) return null;
    const r = parse(v);
    if (r === null) ignored.push({ key, value: v, takes });
    return r;
  };
  const intIn = (lo: number, hi: number) => (v: string) => {
    const n = num(v);
    return Number.isInteger(n) && n >= lo && n <= hi ? n : null;
  };
  const oneOf = (list: readonly (readonly [number, string])[] | readonly number[]) => (v: string) => {
    const n = num(v);
    return Number.isFinite(n) && list.some((x) => (Array.isArray(x) ? x[0] : x) === n) ? n : null;
  };
  const word =
    <W extends string>(list: readonly W[]) =>
    (v: string) =>
      (list as readonly string[]).includes(v) ? (v as W) : null;
  const set = <K extends keyof SimSettings>(k: K, v: SimSettings[K] | null) => {
    if (v !== null) out[k] = v;
  };
  set('mode', take('sim.mode', MODES.join(', '), word(MODES)));
  set('workload', take('sim.workload', 'population, replay', word(['population', 'replay'] as const)));
  set('bits', take('sim.bits', '10..18', intIn(10, 18)));
  set('cpus', take('sim.cpus', `1..${maxCpus}`, intIn(1, maxCpus)));
  set('stacks', take('sim.stacks', `1..${fmt(URL_MAX_STACKS)}`, intIn(1, URL_MAX_STACKS)));
  set(
    'zipf',
    take('sim.zipf', '0..4', (v) => {
      const z = num(v);
      return Number.isFinite(z) && z >= 0 && z <= 4 ? z : null;
    }),
  );
  const depth = take('sim.depth', `MIN-MAX within 1-${MAX_WORKLOAD_DEPTH}`, (v) => {
    const m = /^(\d{1,3})-(\d{1,3})$/.exec(v);
    if (!m) return null;
    const [lo, hi] = [Number(m[1]), Number(m[2])];
    return lo >= 1 && lo <= hi && hi <= MAX_WORKLOAD_DEPTH ? { depthMin: lo, depthMax: hi } : null;
  });
  if (depth) Object.assign(out, depth);
  set('speed', take('sim.speed', choices(SPEEDS), oneOf(SPEEDS)));
  set('windowUs', take('sim.window', choices(WINDOWS), oneOf(WINDOWS)));
  set('ringKb', take('sim.ring', choices(RING_KBS), oneOf(RING_KBS)));
  set('seed', take('sim.seed', `0..${fmt(0xffff_ffff)}`, intIn(0, 0xffff_ffff)));
  set('v8Variant', take('sim.v8', 'posted, bin', word(['posted', 'bin'] as const)));
  set('rcuOffShare', take('sim.rcu', choices(RCU_SHARES), oneOf(RCU_SHARES)));
  set('phaseShift', take('sim.phase', choices(PHASE_SHIFTS), oneOf(PHASE_SHIFTS)));
  set('irqRate', take('sim.irq', choices(INTERRUPT_RATES), oneOf(INTERRUPT_RATES)));
  set('nmiRate', take('sim.nmi', choices(INTERRUPT_RATES), oneOf(INTERRUPT_RATES)));
  for (const [key, value] of q)
    if (key.startsWith('sim.') && !(SIM_KEYS as readonly string[]).includes(key)) ignored.push({ key, value, takes: 'nothing (not a setting)' });
  return { settings: out, ignored };
}

/** The settings a query string carries (only the valid ones); `maxCpus` is this machine's limit. */
export function parseSimSettings(search: string, maxCpus: number): Partial<SimSettings> {
  return parseSimSettingsNoted(search, maxCpus).settings;
}

/** The pane's notice for values the URL gave and the page did not take; null when there are none. */
export function ignoredNotice(ignored: readonly IgnoredSetting[]): string | null {
  if (ignored.length === 0) return null;
  const cut = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s);
  return `Not taken from the address (the defaults stand): ${ignored.map((i) => `${cut(i.key)}=${cut(i.value)} (takes ${i.takes})`).join('; ')}`;
}

/** The query string with the settings that differ from the defaults, keeping every key the settings do not own. */
export function formatSimSettings(o: SimSettings, search = ''): string {
  const q = new URLSearchParams(search);
  for (const k of SIM_KEYS) q.delete(k);
  const d = DEFAULT_SETTINGS;
  if (o.mode !== d.mode) q.set('sim.mode', o.mode);
  if (o.workload !== d.workload) q.set('sim.workload', o.workload);
  if (o.bits !== d.bits) q.set('sim.bits', String(o.bits));
  if (o.cpus !== d.cpus) q.set('sim.cpus', String(o.cpus));
  if (o.stacks !== d.stacks) q.set('sim.stacks', String(o.stacks));
  if (o.zipf !== d.zipf) q.set('sim.zipf', String(o.zipf));
  if (o.depthMin !== d.depthMin || o.depthMax !== d.depthMax) q.set('sim.depth', `${o.depthMin}-${o.depthMax}`);
  if (o.speed !== d.speed) q.set('sim.speed', String(o.speed));
  if (o.windowUs !== d.windowUs) q.set('sim.window', String(o.windowUs));
  if (o.ringKb !== d.ringKb) q.set('sim.ring', String(o.ringKb));
  if (o.seed !== d.seed) q.set('sim.seed', String(o.seed));
  if (o.v8Variant !== d.v8Variant) q.set('sim.v8', o.v8Variant);
  if (o.rcuOffShare !== d.rcuOffShare) q.set('sim.rcu', String(o.rcuOffShare));
  if (o.phaseShift !== d.phaseShift) q.set('sim.phase', String(o.phaseShift));
  if (o.irqRate !== d.irqRate) q.set('sim.irq', String(o.irqRate));
  if (o.nmiRate !== d.nmiRate) q.set('sim.nmi', String(o.nmiRate));
  const s = q.toString();
  return s ? `?${s}` : '';
}
