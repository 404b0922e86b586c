import { useRef, type KeyboardEvent, type MouseEvent, type PointerEvent } from 'react';

/** how long a press is held before it counts as a long-press (touch has no right button) */
export const LONG_PRESS_MS = 550;
const SLOP_PX = 8;

/**
 * Handlers that open a context menu on right-click, on a long-press (touch, pen or mouse held
 * still), and on the keyboard's ContextMenu key or Shift+F10. `open` gets the viewport point
 * to open at. The click that ends a long-press is swallowed, so the element is not also
 * clicked (selected, zoomed).
 */
export function useContextMenu<E extends HTMLElement>(open: (x: number, y: number) => void) {
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const start = useRef<{ x: number; y: number } | null>(null);
  const fired = useRef(false);
  const cancel = () => {
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = null;
    start.current = null;
  };
  return {
    onContextMenu: (e: MouseEvent<E>) => {
      e.preventDefault();
      cancel();
      open(e.clientX, e.clientY);
    },
    onPointerDown: (e: PointerEvent<E>) => {
      if (e.button !== 0) return;
      cancel();
      fired.current = false;
      const p = { x: e.clientX, y: e.clientY };
      start.current = p;
      timer.current = setTimeout(() => {
        timer.current = null;
        fired.current = true;
        open(p.x, p.y);
      }, LONG_PRESS_MS);
    },
    onPointerMove: (e: PointerEvent<E>) => {
      const s = start.current;
      if (s && Math.hypot(e.clientX - s.x, e.clientY - s.y) > SLOP_PX) cancel();
    },
    onPointerUp: cancel,
    onPointerCancel: cancel,
    onPointerLeave: cancel,
    onClickCapture: (e: MouseEvent<E>) => {
      if (!fired.current) return;
      fired.current = false;
      e.stopPropagation();
      e.preventDefault();
    },
    onKeyDown: (e: KeyboardEvent<E>) => {
      if (e.key !== 'ContextMenu' && !(e.shiftKey && e.key === 'F10')) return;
      e.preventDefault();
      const r = e.currentTarget.getBoundingClientRect();
      open(r.left + Math.min(40, r.width / 2), r.top + r.height / 2);
    },
  };
}
