import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useStackFrames, useWorkerQuery } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { filterToStack, stackFilter, stackText } from './actions.ts';
import { copyText, useMenuStore, type MenuItem } from './menu-store.ts';

/**
 * The page's context menu (right-click or long-press on a frame, a stack or a flame graph node),
 * its toast, and "show in timeline". Arrow keys move between items, Enter chooses, Esc or a
 * click elsewhere closes.
 */
export function ContextMenuHost() {
  return (
    <>
      <Menu />
      <Toast />
      <Reveal />
    </>
  );
}

function Menu() {
  const open = useMenuStore((s) => s.open);
  const close = useMenuStore((s) => s.close);
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<{ left: number; top: number } | null>(null);

  // kept inside the viewport
  useLayoutEffect(() => {
    const el = ref.current;
    if (!open || !el) return setPos(null);
    const r = el.getBoundingClientRect();
    setPos({ left: Math.max(4, Math.min(open.x, window.innerWidth - r.width - 4)), top: Math.max(4, Math.min(open.y, window.innerHeight - r.height - 4)) });
  }, [open]);
  // the first item takes the focus once the menu is placed (hidden, it cannot)
  useEffect(() => {
    const el = ref.current;
    if (pos && el && !el.contains(document.activeElement)) el.querySelector<HTMLButtonElement>('button:not(:disabled)')?.focus();
  }, [pos]);

  useEffect(() => {
    if (!open) return;
    const key = (e: KeyboardEvent) => {
      const el = ref.current;
      if (!el) return;
      if (e.key === 'Escape') {
        // the menu takes this Esc: it is not an undo
        e.preventDefault();
        e.stopPropagation();
        close();
        return;
      }
      if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'Home' && e.key !== 'End') return;
      e.preventDefault();
      e.stopPropagation();
      const items = [...el.querySelectorAll<HTMLButtonElement>('button:not(:disabled)')];
      const at = items.indexOf(document.activeElement as HTMLButtonElement);
      const next = e.key === 'Home' ? 0 : e.key === 'End' ? items.length - 1 : (at + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length;
      items[next]?.focus();
    };
    const away = (e: PointerEvent) => {
      if (!ref.current?.contains(e.target as Node)) close();
    };
    const gone = () => close();
    window.addEventListener('keydown', key, true);
    window.addEventListener('pointerdown', away, true);
    window.addEventListener('resize', gone);
    window.addEventListener('blur', gone);
    return () => {
      window.removeEventListener('keydown', key, true);
      window.removeEventListener('pointerdown', away, true);
      window.removeEventListener('resize', gone);
      window.removeEventListener('blur', gone);
    };
  }, [open, close]);

  // a stack's menu reads its frames ("Copy stack") and its stack_hash ("Filter to this stack") while it is open
  const stack = open?.stack ?? null;
  const frames = useStackFrames(stack).data;
  const hash = useWorkerQuery<string>(stack === null ? null : `menu-stack-hash|${stack}`, (api) => api.stackHash(stack!)).data;
  if (!open) return null;
  const items = open.items.map((it) => (stack === null || !it.disabled ? it : complete(it, stack, frames, hash)));
  return (
    <div
      ref={ref}
      className="context-menu"
      role="menu"
      aria-label={open.title}
      data-testid="context-menu"
      style={{ left: pos?.left ?? open.x, top: pos?.top ?? open.y, visibility: pos ? 'visible' : 'hidden' }}
      onContextMenu={(e) => e.preventDefault()}
    >
      <div className="context-title mono" title={open.title}>
        {open.title}
      </div>
      {items.map((it) => (
        <button
          key={it.id}
          type="button"
          role="menuitem"
          data-testid={`menu-${it.id}`}
          disabled={it.disabled}
          title={it.hint}
          onClick={() => {
            close();
            void it.run();
          }}
        >
          <span>{it.label}</span>
          {it.detail && <span className="quiet mono">{it.detail}</span>}
        </button>
      ))}
    </div>
  );
}

/** A stack's items that wait for what the menu asked for: enabled once it is here. */
function complete(it: MenuItem, stack: number, frames: string[] | null, hash: string | null): MenuItem {
  if (it.id === 'copy-stack' && frames)
    return { ...it, disabled: false, detail: `${fmtInt(frames.length)} frames, leaf first`, run: () => copyText(stackText(frames), 'stack') };
  if (it.id === 'filter-stack' && hash) return { ...it, disabled: false, detail: stackFilter(hash), run: () => filterToStack(stack, hash) };
  return it;
}

function Toast() {
  const toast = useMenuStore((s) => s.toast);
  const [shown, setShown] = useState<number | null>(null);
  useEffect(() => {
    if (!toast) return;
    setShown(toast.seq);
    const t = setTimeout(() => setShown(null), toast.error ? 5000 : 1800);
    return () => clearTimeout(t);
  }, [toast]);
  if (!toast || shown !== toast.seq) return null;
  return (
    <div className={toast.error ? 'toast error' : 'toast'} role="status" data-testid="toast">
      {toast.text}
    </div>
  );
}

/** the least window "show in timeline" zooms to, as a share of the whole trace */
const MIN_SHARE = 0.002;

/** A window around [first, last] with a margin, at least MIN_SHARE of the trace, inside it; null: the whole trace. */
export function fitWindow(first: number, last: number, full: [number, number]): [number, number] | null {
  const span = full[1] - full[0];
  if (!(span > 0)) return null;
  const width = Math.max(last - first, span * MIN_SHARE);
  const pad = width * 0.05;
  let a = (first + last) / 2 - width / 2 - pad;
  let b = (first + last) / 2 + width / 2 + pad;
  if (a < full[0]) [a, b] = [full[0], Math.min(full[1], full[0] + (b - a))];
  if (b > full[1]) [a, b] = [Math.max(full[0], full[1] - (b - a)), full[1]];
  return b - a >= span * 0.9999 ? null : [a, b];
}

/** Selects the stack to reveal, asks for its occurrences (in the generation and CPUs chosen) and zooms the timeline to them. */
function Reveal() {
  const reveal = useMenuStore((s) => s.reveal);
  const done = useMenuStore((s) => s.revealed);
  const say = useMenuStore((s) => s.say);
  const generation = useViewStore((v) => v.generation);
  const cpus = useViewStore((v) => v.cpus);
  const overview = useLoadStore((s) => s.overview);
  const sel = { range: null, generation, cpus };
  const q = useWorkerQuery<{ seq: number; ts: Float64Array }>(reveal ? JSON.stringify([reveal.seq, reveal.stack, sel]) : null, async (api) => ({
    seq: reveal!.seq,
    ts: await api.stackOccurrences(reveal!.stack, sel),
  }));
  useEffect(() => {
    if (!reveal || !overview || !q.data || q.data.seq !== reveal.seq) return;
    const ts = q.data.ts;
    const v = useViewStore.getState();
    if (ts.length === 0) {
      say('No occurrence of this stack in the generation and CPUs chosen', true);
      v.set({ stack: reveal.stack });
    } else {
      v.set({ stack: reveal.stack, window: fitWindow(ts[0], ts[ts.length - 1], [overview.t0, overview.t1]) });
      say(`${fmtInt(ts.length)} ${ts.length === 1 ? 'occurrence' : 'occurrences'} on the timeline`);
      document.querySelector('[aria-label="timeline"]')?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    }
    done();
  }, [q.data, reveal, overview, done, say]);
  return null;
}
