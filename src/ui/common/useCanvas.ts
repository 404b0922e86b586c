import { useEffect, useRef, useState } from 'react';

export interface CanvasSize {
  /** CSS pixels */
  width: number;
  height: number;
  dpr: number;
}

/**
 * A canvas that fills its parent's width at the device's pixel ratio: returns the ref, the size
 * in CSS pixels, and a 2D context already scaled so drawing code thinks in CSS pixels.
 */
export function useCanvas(height: number) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [size, setSize] = useState<CanvasSize>({ width: 0, height, dpr: 1 });
  useEffect(() => {
    const canvas = ref.current;
    const parent = canvas?.parentElement;
    if (!canvas || !parent) return;
    const measure = () => {
      const width = Math.max(50, Math.floor(parent.clientWidth));
      const dpr = window.devicePixelRatio || 1;
      setSize((s) => (s.width === width && s.height === height && s.dpr === dpr ? s : { width, height, dpr }));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(parent);
    return () => ro.disconnect();
  }, [height]);
  const context = (): CanvasRenderingContext2D | null => {
    const canvas = ref.current;
    if (!canvas || size.width === 0) return null;
    const w = Math.round(size.width * size.dpr);
    const h = Math.round(size.height * size.dpr);
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    canvas.style.width = `${size.width}px`;
    canvas.style.height = `${size.height}px`;
    const ctx = canvas.getContext('2d');
    ctx?.setTransform(size.dpr, 0, 0, size.dpr, 0, 0);
    return ctx;
  };
  return { ref, size, context };
}

/** The current value of a CSS variable of the page (theme colours for canvas drawing). */
export const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
