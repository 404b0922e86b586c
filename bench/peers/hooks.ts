// Scripts run in the page before any of its own (Playwright addInitScript), to see when each tool
// has painted its first flame graph. They only record; they change nothing the tools do.

/**
 * Every page: the time of the file input's change event (the hand-over), in window.__t0.
 * Ours: each `smx:flame-painted` mark (FlameCanvas sets data-paint-count, data-nodes and
 * data-painted-nodes on its wrapper, then marks), with what the wrapper and the summary showed at
 * that instant, in window.__smx, so the paint of the new capture is told from the sample's.
 */
export const OURS_HOOK = `(() => {
  window.__t0 = 0;
  window.__smx = [];
  document.addEventListener('change', (e) => { if (e.target && e.target.type === 'file') window.__t0 = performance.now(); }, true);
  const mark = performance.mark.bind(performance);
  performance.mark = function (name, opts) {
    const r = mark(name, opts);
    if (name === 'smx:flame-painted') {
      const w = document.querySelector('[data-testid=flame-main]');
      const u = document.querySelector('[data-testid=summary-unique-stacks]');
      window.__smx.push({
        t: r ? r.startTime : performance.now(),
        count: w ? Number(w.getAttribute('data-paint-count')) : 0,
        nodes: w ? Number(w.getAttribute('data-nodes')) : 0,
        painted: w ? Number(w.getAttribute('data-painted-nodes')) : 0,
        unique: u ? Number((u.textContent || '').replace(/[^0-9]/g, '')) : -1,
      });
    }
    return r;
  };
})();`;

/**
 * speedscope draws its flame chart with WebGL (one canvas, instanced rectangles) and the labels
 * on a 2D overlay. Its landing page draws nothing, so the first WebGL draw call after the
 * hand-over is the flame chart's; window.__gl.painted is the animation frame after it (the frame
 * that shows it). Labels drawn on the overlay are counted too, as a check that frames got names.
 */
export const SPEEDSCOPE_HOOK = `(() => {
  window.__t0 = 0;
  const gl = (window.__gl = { first: 0, painted: 0, calls: 0, labels: 0 });
  document.addEventListener('change', (e) => { if (e.target && e.target.type === 'file') window.__t0 = performance.now(); }, true);
  const wrap = (proto, name) => {
    const f = proto && proto[name];
    if (typeof f !== 'function' || f.__smxWrapped) return;
    const w = function (...a) {
      gl.calls++;
      if (!gl.first && window.__t0) {
        gl.first = performance.now();
        requestAnimationFrame(() => { gl.painted = performance.now(); });
      }
      return f.apply(this, a);
    };
    w.__smxWrapped = true;
    proto[name] = w;
  };
  for (const P of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!P) continue;
    wrap(P.prototype, 'drawArrays');
    wrap(P.prototype, 'drawElements');
    wrap(P.prototype, 'drawArraysInstanced');
    wrap(P.prototype, 'drawElementsInstanced');
    const ge = P.prototype.getExtension;
    P.prototype.getExtension = function (n) {
      const e = ge.call(this, n);
      if (e && /instanced_arrays/i.test(n)) {
        wrap(Object.getPrototypeOf(e), 'drawArraysInstancedANGLE');
        wrap(Object.getPrototypeOf(e), 'drawElementsInstancedANGLE');
      }
      return e;
    };
  }
  const ft = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (...a) {
    if (window.__t0) gl.labels++;
    return ft.apply(this, a);
  };
})();`;
