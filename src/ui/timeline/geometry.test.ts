import { describe, expect, it } from 'vitest';
import { BREAK_SHARE, LABEL_W, SegmentAxis } from './geometry.ts';

describe('SegmentAxis', () => {
  it('one segment: axis units are seconds from its start, zoom and pan as on a plain time axis', () => {
    const a = new SegmentAxis([{ firstTs: 100, lastTs: 110, events: 5 }]);
    expect(a.segmented).toBe(false);
    expect(a.full).toEqual([100, 110]);
    expect([a.u(100), a.u(105), a.u(110)]).toEqual([0, 5, 10]);
    const x = a.scale([100, 110], 1096);
    expect([x(100), x(105), x(110)]).toEqual([LABEL_W, LABEL_W + 500, LABEL_W + 1000]);
    expect(a.zoom([100, 110], 0.5, 105)).toEqual([102.5, 107.5]);
    expect(a.pan([102.5, 107.5], 0.2)).toEqual([103.5, 108.5]);
    // kept inside
    expect(a.pan([105, 110], 0.5)).toEqual([105, 110]);
    expect(a.normalise([100, 110])).toBeNull();
    expect(a.normalise([101, 110])).toEqual([101, 110]);
  });

  it('an instant gets a microsecond, so it has a width', () => {
    const a = new SegmentAxis([{ firstTs: 7, lastTs: 7, events: 1 }]);
    expect(a.full[0]).toBe(7);
    expect(a.full[1]).toBeCloseTo(7.000001, 9);
  });

  // the sample (1 s, 4,000 events) and a prose file's runs days later (few events each)
  const segs = [
    { firstTs: 5123, lastTs: 5124, events: 4000 },
    { firstTs: 7269511.08, lastTs: 7269511.33, events: 3 },
    { firstTs: 7269834.88, lastTs: 7269839.92, events: 2 },
    { firstTs: 7270545.34, lastTs: 7270545.34, events: 3 },
  ];
  const a = new SegmentAxis(segs);

  it('several: side by side by their events, none under 8%, a break between each two', () => {
    expect(a.segmented).toBe(true);
    const widths = a.parts.map((p) => p.u1 - p.u0);
    expect(widths.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 12);
    // shares of the 4,008 events: 99.8% and three under 8%, raised to 8%, then all renormalised
    const sum = 4000 / 4008 + 3 * 0.08;
    expect(widths[0]).toBeCloseTo(4000 / 4008 / sum, 12);
    for (const w of widths.slice(1)) expect(w).toBeCloseTo(0.08 / sum, 12);
    for (let i = 1; i < a.parts.length; i++) expect(a.parts[i].u0 - a.parts[i - 1].u1).toBeCloseTo(BREAK_SHARE, 12);
    expect(a.length).toBeCloseTo(1 + 3 * BREAK_SHARE, 12);
    // the instant is padded inside its gaps
    expect(a.parts[3].t0).toBeLessThan(7270545.34);
    expect(a.parts[3].t1).toBeGreaterThan(7270545.34);
  });

  it('maps trace seconds to units and back, monotonically, gaps onto the breaks', () => {
    const ts = [5000, 5123, 5123.5, 5124, 10000, 7269511.08, 7269511.2, 7269600, 7269839.92, 7270545.34, 7270600];
    const us = ts.map((t) => a.u(t));
    for (let i = 1; i < us.length; i++) expect(us[i]).toBeGreaterThan(us[i - 1]);
    for (const t of ts) expect(a.t(a.u(t))).toBeCloseTo(t, 4);
    // a time between two segments lies on the break between them
    expect(a.u(10000)).toBeGreaterThan(a.parts[0].u1);
    expect(a.u(10000)).toBeLessThan(a.parts[1].u0);
  });

  it('a scale over the whole axis: each part at its pixels; visible parts of a window', () => {
    const width = LABEL_W + 1000;
    const x = a.scale(a.full, width);
    for (const p of a.parts) {
      expect(x(p.t0)).toBeCloseTo(LABEL_W + (p.u0 / a.length) * 1000, 6);
      expect(x(p.t1)).toBeCloseTo(LABEL_W + (p.u1 / a.length) * 1000, 6);
      expect(x.invert(x((p.t0 + p.t1) / 2))).toBeCloseTo((p.t0 + p.t1) / 2, 3);
    }
    expect(a.visible(a.full, width).map((v) => v.index)).toEqual([0, 1, 2, 3]);
    // a window inside the third segment shows it alone, across the whole plot
    const w: [number, number] = [7269835, 7269836];
    const vis = a.visible(w, width);
    expect(vis.map((v) => [v.index, v.t0, v.t1])).toEqual([[2, 7269835, 7269836]]);
    expect(vis[0].x0).toBeCloseTo(LABEL_W, 9);
    expect(vis[0].x1).toBeCloseTo(width, 9);
  });

  it('zoom keeps the point under the pointer, pan moves by a share of the window, both in axis units', () => {
    const at = 5123.5;
    const z = a.zoom(a.full, 0.1, at);
    expect((a.u(at) - a.u(z[0])) / (a.u(z[1]) - a.u(z[0]))).toBeCloseTo((a.u(at) - 0) / a.length, 9);
    expect(a.u(z[1]) - a.u(z[0])).toBeCloseTo(a.length * 0.1, 9);
    const p = a.pan(z, 0.5);
    expect(a.u(p[0]) - a.u(z[0])).toBeCloseTo(a.length * 0.05, 9);
    // a window covering most of the trace's seconds is not the whole axis: the test is in units
    const most: [number, number] = [5123.5, 7270545.34];
    expect(most[1] - most[0]).toBeGreaterThan(0.9999 * (a.full[1] - a.full[0]));
    expect(a.normalise(most)).toEqual(most);
    expect(a.normalise(a.full)).toBeNull();
  });

  it('around a part: its range and a margin into the breaks', () => {
    const w = a.around(1)!;
    expect(w[0]).toBeLessThan(a.parts[1].t0);
    expect(w[0]).toBeGreaterThan(a.parts[0].t1);
    expect(w[1]).toBeGreaterThan(a.parts[1].t1);
    expect(w[1]).toBeLessThan(a.parts[2].t0);
    expect(a.visible(w, 1096).map((v) => v.index)).toEqual([1]);
  });
});
