import { MAX_WORKLOAD_DEPTH, MODES, type Mode } from '../core/sim/map-layout.ts';
import { DEFAULT_SETTINGS, PHASE_SHIFTS, RCU_SHARES, RING_KBS, SPEEDS, WINDOWS, type SimSettings } from './sim-settings.ts';

/**
 * The simulator's settings <-> the query string, beside the explorer's view (view-url.ts) and the
 * pane (`view=simulator`, sim-pane.ts). Keys are prefixed `sim.` so they never meet the view's
 * (`cpus`, `window`, `theme` are the explorer's). Only settings that differ from the defaults are
 * written; a value that is unknown, out of range or not one of the pane's choices is ignored.
 */

export const SIM_KEYS = ['sim.mode', 'sim.workload', 'sim.bits', 'sim.cpus', 'sim.stacks', 'sim.zipf', 'sim.depth', 'sim.speed', 'sim.window', 'sim.ring', 'sim.seed', 'sim.v8', 'sim.rcu', 'sim.phase'] as const;

const num = (s: string | null) => (s === null || s.trim() === '' ? NaN : Number(s));
const intIn = (s: string | null, lo: number, hi: number) => {
  const n = num(s);
  return Number.isInteger(n) && n >= lo && n <= hi ? n : null;
};
const oneOf = (s: string | null, list: readonly (readonly [number, string])[] | readonly number[]) => {
  const n = num(s);
  if (!Number.isFinite(n)) return null;
  return list.some((x) => (Array.isArray(x) ? x[0] : x) === n) ? n : null;
};

/** The settings a query string carries (only the valid ones); `maxCpus` is this machine's limit. */
export function parseSimSettings(search: string, maxCpus: number): Partial<SimSettings> {
  const q = new URLSearchParams(search);
  const out: Partial<SimSettings> = {};
  const mode = q.get('sim.mode');
  if (mode && (MODES as readonly string[]).includes(mode)) out.mode = mode as Mode;
  const workload = q.get('sim.workload');
  if (workload === 'population' || workload === 'replay') out.workload = workload;
  const bits = intIn(q.get('sim.bits'), 10, 18);
  if (bits !== null) out.bits = bits;
  const cpus = intIn(q.get('sim.cpus'), 1, maxCpus);
  if (cpus !== null) out.cpus = cpus;
  const stacks = intIn(q.get('sim.stacks'), 1, 100_000);
  if (stacks !== null) out.stacks = stacks;
  const zipf = num(q.get('sim.zipf'));
  if (Number.isFinite(zipf) && zipf >= 0 && zipf <= 4) out.zipf = zipf;
  const depth = /^(\d+)-(\d+)$/.exec(q.get('sim.depth') ?? '');
  if (depth) {
    const [lo, hi] = [Number(depth[1]), Number(depth[2])];
    if (lo >= 1 && lo <= hi && hi <= MAX_WORKLOAD_DEPTH) Object.assign(out, { depthMin: lo, depthMax: hi });
  }
  const speed = oneOf(q.get('sim.speed'), SPEEDS);
  if (speed !== null) out.speed = speed;
  const windowUs = oneOf(q.get('sim.window'), WINDOWS);
  if (windowUs !== null) out.windowUs = windowUs;
  const ring = oneOf(q.get('sim.ring'), RING_KBS);
  if (ring !== null) out.ringKb = ring;
  const seed = intIn(q.get('sim.seed'), 0, 0xffff_ffff);
  if (seed !== null) out.seed = seed;
  const v8 = q.get('sim.v8');
  if (v8 === 'posted' || v8 === 'bin') out.v8Variant = v8;
  const rcu = oneOf(q.get('sim.rcu'), RCU_SHARES);
  if (rcu !== null) out.rcuOffShare = rcu;
  const phase = oneOf(q.get('sim.phase'), PHASE_SHIFTS);
  if (phase !== null) out.phaseShift = phase;
  return out;
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
  const s = q.toString();
  return s ? `?${s}` : '';
}
