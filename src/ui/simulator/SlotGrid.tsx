import * as d3 from 'd3';
import { useEffect, useRef, useState } from 'react';
import { LANE_STATE } from '../../core/sim/live.ts';
import { C, ELT_WORDS } from '../../core/sim/map-layout.ts';
import { useResolvedTheme } from '../../state/theme.ts';
import type { SimSession } from '../../state/sim-session.ts';
import { fmtInt } from '../common/format.ts';

/**
 * The map's slot table, one cell per slot, coloured by state: free, claimed and not yet published,
 * published (shaded by age within the generation: element order), gravestone (claimed, no
 * element, pool empty). Redrawn every frame from the SharedArrayBuffer (plain reads: a picture,
 * not the kernel's path).
 */

const MAX_HEIGHT = 300;

interface Counts {
  free: number;
  claimed: number;
  published: number;
  gravestones: number;
}

const PALETTE = {
  light: { free: '#e6e8ec', claimed: '#f2a91e', old: '#1b4f9c', young: '#8fc1f5', grave: '#b0281c' },
  dark: { free: '#2b3038', claimed: '#ffbe3b', old: '#2f6fde', young: '#a8d1ff', grave: '#ff6b5b' },
};

function rgba(c: string): number {
  const x = d3.rgb(c);
  return (255 << 24) | (x.b << 16) | (x.g << 8) | x.r; // little-endian ImageData
}

export function SlotGrid({ session, tick }: { session: SimSession; tick: number }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [counts, setCounts] = useState<Counts>({ free: 0, claimed: 0, published: 0, gravestones: 0 });
  const [hover, setHover] = useState<number | null>(null);
  const theme = useResolvedTheme();
  const map = session.sim.map;
  const slots = map.slots;
  const dpr = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;

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
    const claimedC = rgba(p.claimed);
    const grave = rgba(p.grave);
    const ages = Array.from({ length: 32 }, (_, i) => rgba(d3.interpolateRgb(p.old, p.young)(i / 31)));
    const img = ctx.createImageData(wd, hd);
    const px = new Uint32Array(img.data.buffer);
    const u32 = map.u32;
    const i32 = map.i32;
    const nextElt = Math.min(Atomics.load(i32, C.NEXT_ELT), map.capacity);
    const poolEmpty = Atomics.load(i32, C.NEXT_ELT) >= map.capacity;
    const claimedByCpu = new Set<number>();
    for (let c = 0; c < session.sim.config.cpus; c++) {
      const l = session.live.laneView(c);
      if (l.state === LANE_STATE.CLAIMED) claimedByCpu.add(l.slot);
    }
    const gap = cell >= 5 ? 1 : 0;
    const n: Counts = { free: 0, claimed: 0, published: 0, gravestones: 0 };
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
          color = ages[Math.min(31, Math.floor(((v - 1) / Math.max(1, nextElt)) * 32))];
        } else if (claimedByCpu.has(s) || !poolEmpty) {
          n.claimed++;
          color = claimedC;
        } else {
          n.gravestones++;
          color = grave;
        }
      }
      const x0 = (s % cols) * cell;
      const y0 = Math.floor(s / cols) * cell;
      for (let y = y0; y < y0 + cell - gap; y++) px.fill(color, y * wd + x0, y * wd + x0 + cell - gap);
    }
    ctx.putImageData(img, 0, 0);
    setCounts((old) => (old.free === n.free && old.claimed === n.claimed && old.published === n.published && old.gravestones === n.gravestones ? old : n));
  }, [tick, wd, hd, cell, cols, theme, map, session, slots, dpr]);

  const generation = map.generation;
  const resets = Atomics.load(map.i32, C.RESETS);
  const resetting = Atomics.load(map.i32, C.RESET_FLAG) !== 0;
  const p = PALETTE[theme];
  return (
    <section className="panel sim-grid" aria-label="slot table">
      <div className="pane-head">
        <h2>Slot table</h2>
        <span className="quiet">
          {fmtInt(slots)} slots, {fmtInt(map.capacity)} elements · generation <b data-testid="sim-generation">{generation}</b> · resets <b>{resets}</b>
        </span>
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
      >
        <canvas
          ref={canvas}
          onMouseMove={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            const col = Math.floor(((e.clientX - r.left) * dpr) / cell);
            const row = Math.floor(((e.clientY - r.top) * dpr) / cell);
            const s = row * cols + col;
            setHover(col < cols && s < slots ? s : null);
          }}
          onMouseLeave={() => setHover(null)}
        />
      </div>
      <div className="sim-legend">
        <Swatch color={p.free} label="free" n={counts.free} id="free" />
        <Swatch color={p.claimed} label="claimed, not published" n={counts.claimed} id="claimed" />
        <Swatch color={`linear-gradient(90deg, ${p.old}, ${p.young})`} label="published (old → new in the generation)" n={counts.published} id="published" />
        <Swatch color={p.grave} label="gravestone (claimed, pool empty)" n={counts.gravestones} id="gravestones" />
        <span className="mono sim-hover">{hover === null ? 'hover a slot' : describe(session, hover)}</span>
      </div>
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

function describe(session: SimSession, s: number): string {
  const m = session.sim.map;
  const key = m.key(s);
  if (key === 0) return `slot ${s}: free`;
  const e = m.published(s);
  const k = `key 0x${key.toString(16).padStart(8, '0')}`;
  if (e < 0) return `slot ${s}: ${k}, no element`;
  const nr = Atomics.load(m.u32, m.eltsAt + e * ELT_WORDS);
  return `slot ${s}: ${k}, element ${e}, depth ${nr}, ref_count ${m.elementRef(e)}`;
}
