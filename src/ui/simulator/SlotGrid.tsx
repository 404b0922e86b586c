import { useSimStore } from '../../state/sim/sim-store.ts';
import * as d3 from 'd3';
import { useEffect, useRef, useState, type CSSProperties } from 'react';
import { LANE_STATE } from '../../core/sim/live.ts';
import { C, ELT_WORDS } from '../../core/sim/map-layout.ts';
import { MAX_PHASES } from '../../core/sim/sim-options.ts';
import { useResolvedTheme } from '../../state/view/theme.ts';
import type { SimSession } from '../../state/sim/sim-session.ts';
import { fmtInt } from '../common/format.ts';
import { fillWords, genTag } from './sim-words.ts';

/**
 * The map's slot table, one cell per slot, coloured by state: free, claimed and not yet published,
 * published, gravestone (claimed, no element, pool empty). A published cell takes the hue of the
 * generation that filled it (v4/v7: of the reset it came after; a reset clears every slot, so that
 * is the current one) and is shaded by age within it (element order). Each reset flashes the
 * cleared table, so it shows even when the same stacks land in the same slots again.
 * Redrawn every frame from the SharedArrayBuffer (plain reads: a picture, not the kernel's path).
 */

const MAX_HEIGHT = 300;
/** how long the cleared table shows after a reset (ms) */
const FLASH_MS = 450;
/** frames listed in the hover card; deeper stacks say how many more */
const TIP_FRAMES = 24;

interface Counts {
  free: number;
  claimed: number;
  published: number;
  gravestones: number;
  /** the lowest published slot, -1: none */
  firstPublished: number;
}

/** Per generation (v4/v7: per reset), cycling: [old, young]. No red or amber: those are gravestones and claims. */
const HUES = {
  light: [
    ['#1b4f9c', '#8fc1f5'],
    ['#0c6b5f', '#7fd8c8'],
    ['#5b2d92', '#c9aef0'],
    ['#2f6b1c', '#a9dc8f'],
    ['#8a1f68', '#f0a6d8'],
    ['#394a60', '#b9c6d6'],
  ],
  dark: [
    ['#2f6fde', '#a8d1ff'],
    ['#14a08e', '#9ff0e0'],
    ['#8a5ad6', '#dcc8ff'],
    ['#4f9a2e', '#c4f0a8'],
    ['#c0479a', '#ffc2ea'],
    ['#6a7d96', '#d5deea'],
  ],
} as const;

const PALETTE = {
  light: { free: '#e6e8ec', claimed: '#f2a91e', grave: '#b0281c', flash: '#fbe6a0' },
  dark: { free: '#2b3038', claimed: '#ffbe3b', grave: '#ff6b5b', flash: '#6a5920' },
};

const hueOf = (generation: number) => (((generation - 1) % HUES.light.length) + HUES.light.length) % HUES.light.length;

function rgba(c: string): number {
  const x = d3.rgb(c);
  return (255 << 24) | (x.b << 16) | (x.g << 8) | x.r; // little-endian ImageData
}

interface Hover {
  slot: number;
  x: number;
  y: number;
}

export function SlotGrid({ session, tick }: { session: SimSession; tick: number }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [counts, setCounts] = useState<Counts>({ free: 0, claimed: 0, published: 0, gravestones: 0, firstPublished: -1 });
  const [hover, setHover] = useState<Hover | null>(null);
  const theme = useResolvedTheme();
  const map = session.sim.map;
  const slots = map.slots;
  const v8 = session.sim.config.mode === 'v8';
  const dpr = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;

  // resets seen by this grid: each one flashes the cleared table (idempotent under a second render)
  const seen = useRef({ session: null as SimSession | null, resets: 0, flashes: 0, until: 0 });
  const resets = Atomics.load(map.i32, C.RESETS);
  const now = performance.now();
  if (seen.current.session !== session) seen.current = { session, resets, flashes: 0, until: 0 };
  else if (resets !== seen.current.resets) {
    seen.current.flashes += Math.max(0, resets - seen.current.resets);
    seen.current.resets = resets;
    seen.current.until = now + FLASH_MS;
  }
  const flashing = now < seen.current.until;
  const generation = map.generation;
  const hue = hueOf(generation);
  // the frame ticks stop with the run: while a flash shows, renders of its own come every 100 ms
  // until one finds it over (a single timer for the end once left a flash up: 1 full e2e run in 3)
  const [, endFlash] = useState(0);
  useEffect(() => {
    if (!flashing) return;
    const t = setInterval(() => endFlash((x) => x + 1), 100);
    return () => clearInterval(t);
  }, [flashing]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(100, Math.floor(el.clientWidth)));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // layout in device pixels: square cells as large as fit MAX_HEIGHT, at least one pixel
  const wd = Math.floor(width * dpr);
  const cell = Math.max(1, Math.floor(Math.sqrt((wd * MAX_HEIGHT * dpr) / slots)));
  const cols = Math.max(1, Math.floor(wd / cell));
  const rows = Math.ceil(slots / cols);
  const hd = rows * cell;

  useEffect(() => {
    const cv = canvas.current;
    if (!cv || wd === 0) return;
    if (cv.width !== wd) cv.width = wd;
    if (cv.height !== hd) cv.height = hd;
    cv.style.width = `${wd / dpr}px`;
    cv.style.height = `${hd / dpr}px`;
    const ctx = cv.getContext('2d');
    if (!ctx) return;
    const p = PALETTE[theme];
    const free = rgba(p.free);
    const flash = rgba(p.flash);
    const claimedC = rgba(p.claimed);
    const grave = rgba(p.grave);
    const [old, young] = HUES[theme][hue];
    const ages = Array.from({ length: 32 }, (_, i) => rgba(d3.interpolateRgb(old, young)(i / 31)));
    const img = ctx.createImageData(wd, hd);
    const px = new Uint32Array(img.data.buffer);
    const u32 = map.u32;
    const i32 = map.i32;
    const nextElt = Math.min(Atomics.load(i32, C.NEXT_ELT), map.capacity);
    const poolEmpty = Atomics.load(i32, C.NEXT_ELT) >= map.capacity;
    const claimedByCpu = new Set<number>();
    for (let c = 0; c < session.sim.config.cpus; c++) {
      const l = session.live.laneView(c);
      // a nested interrupt's insert runs inside the CPU's own, whose claimed slot it holds meanwhile
      if (l.state === LANE_STATE.CLAIMED || l.state === LANE_STATE.NESTED) claimedByCpu.add(l.slot);
    }
    const gap = cell >= 5 ? 1 : 0;
    const n: Counts = { free: 0, claimed: 0, published: 0, gravestones: 0, firstPublished: -1 };
    for (let s = 0; s < slots; s++) {
      const key = u32[map.keysAt + s];
      let color: number;
      if (key === 0) {
        color = free;
        n.free++;
      } else {
        const v = i32[map.valsAt + s];
        if (v !== 0) {
          n.published++;
          if (n.firstPublished < 0) n.firstPublished = s;
          color = ages[Math.min(31, Math.floor(((v - 1) / Math.max(1, nextElt)) * 32))];
        } else if (claimedByCpu.has(s) || !poolEmpty) {
          n.claimed++;
          color = claimedC;
        } else {
          n.gravestones++;
          color = grave;
        }
      }
      // just after a reset: the cleared table, every cell free, lit up
      if (flashing) color = flash;
      const x0 = (s % cols) * cell;
      const y0 = Math.floor(s / cols) * cell;
      for (let y = y0; y < y0 + cell - gap; y++) px.fill(color, y * wd + x0, y * wd + x0 + cell - gap);
    }
    ctx.putImageData(img, 0, 0);
    setCounts((o) =>
      o.free === n.free && o.claimed === n.claimed && o.published === n.published && o.gravestones === n.gravestones && o.firstPublished === n.firstPublished
        ? o
        : n,
    );
  }, [tick, wd, hd, cell, cols, theme, map, session, slots, dpr, flashing, hue]);

  const resetting = Atomics.load(map.i32, C.RESET_FLAG) !== 0;
  const allocated = map.allocated;
  const optionOn = map.optionOn;
  // the workload's phase (SimOptions.phaseShift): the CPUs move on at each reset, wrapping after MAX_PHASES
  const phased = session.sim.config.phase.shift > 0;
  const phase = (resets % MAX_PHASES) + 1;
  const p = PALETTE[theme];
  const hues = HUES[theme];
  const gradient = (g: number) => `linear-gradient(90deg, ${hues[hueOf(g)][0]}, ${hues[hueOf(g)][1]})`;
  const earlier = [generation - 1, generation - 2].filter((g) => g >= 1);
  return (
    <section className="panel sim-grid" aria-label="slot table">
      <div className="pane-head">
        <h2>Slot table</h2>
        <span className="quiet">
          {fmtInt(slots)} slots, {fmtInt(map.capacity)} elements ·{' '}
          {v8 && (
            <>
              generation <b data-testid="sim-generation">{generation}</b> ·{' '}
            </>
          )}
          resets <b data-testid="sim-resets">{resets}</b>
          {phased && (
            <span title={`after each reset the CPUs record the next phase of the workload (${MAX_PHASES} phases, then they wrap around)`}>
              {' '}
              · workload phase <b data-testid="sim-phase-now">{phase}</b>
            </span>
          )}
        </span>
        {!optionOn && allocated && (
          <span className="chip sim-off" data-testid="sim-option-off">
            options/stackmap off: stacks in full, the map kept
          </span>
        )}
        {resetting && (
          <span className="chip sim-resetting" data-testid="sim-resetting">
            reset running: inserts bypass the map
          </span>
        )}
      </div>
      <div
        ref={box}
        className="sim-grid-box"
        data-testid="sim-grid"
        data-generation={generation}
        data-resets={resets}
        data-reset-flag={resetting ? '1' : '0'}
        data-published={counts.published}
        data-claimed={counts.claimed}
        data-gravestones={counts.gravestones}
        data-fill-generation={generation}
        data-fill-hue={hue}
        data-flashes={seen.current.flashes}
        data-flashing={flashing ? '1' : '0'}
        data-first-published={counts.firstPublished}
        data-cols={cols}
        data-slots={slots}
        data-allocated={allocated ? '1' : '0'}
        data-cell-px={cell / dpr}
      >
        <canvas
          ref={canvas}
          onMouseMove={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            const col = Math.floor(((e.clientX - r.left) * dpr) / cell);
            const row = Math.floor(((e.clientY - r.top) * dpr) / cell);
            const s = row * cols + col;
            setHover(col < cols && s < slots ? { slot: s, x: e.clientX, y: e.clientY } : null);
          }}
          onMouseLeave={() => setHover(null)}
          onClick={(e) => {
            // after a run: the story of an id naming this slot (IdStories)
            const r = e.currentTarget.getBoundingClientRect();
            const col = Math.floor(((e.clientX - r.left) * dpr) / cell);
            const row = Math.floor(((e.clientY - r.top) * dpr) / cell);
            const s = row * cols + col;
            if (col < cols && s < slots) useSimStore.getState().focusStory(s);
          }}
        />
        {!allocated && (
          <div className="sim-grid-freed" data-testid="sim-grid-freed">
            map freed (echo free &gt; stack_map): stack_map reads “stackmap not initialized”.
            <br />
            Turning options/stackmap on allocates a new map{v8 ? `, generation ${generation}: the generation goes on, so no old cookie matches it` : ''}.
          </div>
        )}
        {flashing && (
          <div className="sim-grid-flash" key={seen.current.flashes} data-testid="sim-grid-flash">
            reset {resets}: the table is cleared{v8 ? `, generation ${generation}` : ''}
          </div>
        )}
      </div>
      <div className="sim-legend">
        <Swatch color={p.free} label="free" n={counts.free} id="free" />
        <Swatch color={p.claimed} label="claimed, not published" n={counts.claimed} id="claimed" />
        <Swatch color={gradient(generation)} label={`published, filled ${fillWords(v8, generation)} (old → new)`} n={counts.published} id="published" />
        {earlier.length > 0 && (
          <span
            className="sim-swatch sim-earlier"
            data-testid="sim-grid-earlier"
            title={v8 ? 'the hues of earlier generations: a reset cleared their slots' : 'the hues of the table before the last resets: each reset cleared it'}
          >
            earlier:{' '}
            {earlier.map((g) => (
              <span key={g}>
                <i style={{ background: gradient(g) }} />
                {genTag(v8, g)}{' '}
              </span>
            ))}
          </span>
        )}
        <Swatch color={p.grave} label="gravestone (claimed, pool empty)" n={counts.gravestones} id="gravestones" />
        <span className="quiet sim-hover-hint">hover a slot for its stack</span>
      </div>
      {hover !== null && <SlotTip session={session} hover={hover} />}
    </section>
  );
}

function Swatch({ color, label, n, id }: { color: string; label: string; n: number; id: string }) {
  return (
    <span className="sim-swatch">
      <i style={{ background: color }} />
      {label} <b data-testid={`sim-grid-${id}`}>{fmtInt(n)}</b>
    </span>
  );
}

/** The hovered slot: its state, key, element, ref_count, who filled it and the stack's frames, symbolized. */
function SlotTip({ session, hover }: { session: SimSession; hover: Hover }) {
  const m = session.sim.map;
  const v8 = session.sim.config.mode === 'v8';
  const s = hover.slot;
  const key = m.key(s);
  const elt = key === 0 ? -1 : m.published(s);
  const generation = m.generation;
  const resetting = Atomics.load(m.i32, C.RESET_FLAG) !== 0;
  let claimer = -1;
  let nested = false;
  for (let c = 0; c < session.sim.config.cpus; c++) {
    const l = session.live.laneView(c);
    if ((l.state === LANE_STATE.CLAIMED || l.state === LANE_STATE.NESTED) && l.slot === s) {
      claimer = c;
      nested = l.state === LANE_STATE.NESTED;
    }
  }
  const poolEmpty = Atomics.load(m.i32, C.NEXT_ELT) >= m.capacity;
  const state = key === 0 ? 'free' : elt >= 0 ? 'published' : claimer >= 0 || !poolEmpty ? 'claimed' : 'gravestone';
  const nr = elt >= 0 ? Atomics.load(m.u32, m.eltsAt + elt * ELT_WORDS) : 0;
  const ref = elt >= 0 ? m.elementRef(elt) : 0;
  const frames = elt >= 0 ? Array.from(m.elementIps(elt), (ip) => session.sim.population.kernel.printFrame(ip)) : [];
  // keep the card on screen: open towards the larger side of the cursor
  const vw = typeof window !== 'undefined' ? window.innerWidth : 1600;
  const vh = typeof window !== 'undefined' ? window.innerHeight : 1000;
  const style: CSSProperties = {
    ...(hover.x > vw / 2 ? { right: vw - hover.x + 14 } : { left: hover.x + 14 }),
    ...(hover.y > vh / 2 ? { bottom: vh - hover.y + 14 } : { top: hover.y + 14 }),
    maxHeight: Math.max(120, (hover.y > vh / 2 ? hover.y : vh - hover.y) - 28),
  };
  const filled = `filled ${fillWords(v8, generation)}`;
  const storied = useSimStore.getState().stories?.list.some((x) => x.slot === s) ?? false;
  return (
    <div
      className="sim-tip mono"
      style={style}
      data-testid="sim-slot-tip"
      data-slot={s}
      data-state={state}
      data-ref-count={ref}
      data-depth={nr}
      data-filled-generation={elt >= 0 ? generation : ''}
    >
      <div className="sim-tip-head">
        slot {s}: <b>{state === 'claimed' ? 'claimed, not published yet' : state}</b>
        {key !== 0 && <span className="quiet"> · key 0x{key.toString(16).padStart(8, '0')}</span>}
      </div>
      {state === 'claimed' && (
        <div className="quiet">
          {claimer >= 0
            ? `CPU ${claimer} is filling its element${nested ? ', with an interrupt\u2019s insert running inside it on the same CPU' : ''}`
            : 'an insert is filling its element'}
        </div>
      )}
      {state === 'gravestone' && <div className="quiet">claimed, no element left in the pool: later probes walk past it</div>}
      {storied && (
        <div className="bad">
          click: why an id naming slot {s} is {v8 ? 'detected' : 'wrong'} (its story below)
        </div>
      )}
      {elt >= 0 && (
        <>
          <div>
            element {elt} · depth {nr} · ref_count <b data-testid="sim-slot-refcount">{fmtInt(ref)}</b>
          </div>
          <div data-testid="sim-slot-filled">
            {filled}
            {resetting ? ' (a reset is running: it is about to be cleared)' : ''}
          </div>
          <ol className="sim-tip-frames">
            {frames.slice(0, TIP_FRAMES).map((f, i) => (
              <li key={i} data-testid="sim-slot-frame">
                {f}
              </li>
            ))}
            {frames.length > TIP_FRAMES && <li className="quiet">… {frames.length - TIP_FRAMES} more frames</li>}
          </ol>
        </>
      )}
    </div>
  );
}
