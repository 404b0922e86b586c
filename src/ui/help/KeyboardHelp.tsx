import { useEffect } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { startUndo, undoLast } from '../common/undo.ts';
import { ContextMenuHost } from '../menu/ContextMenu.tsx';
import { useMenuStore } from '../menu/menu-store.ts';

/** Every key and gesture of every pane, as the help lists them (and as the panes implement them). */
export const KEYS: { pane: string; keys: [string, string][] }[] = [
  {
    pane: 'Anywhere',
    keys: [
      ['?', 'this help'],
      ['f', 'zoom the timeline to fit: the brushed range, else the selected stack’s occurrences, else the chosen generation, else the whole trace'],
      ['Esc', 'undo the last zoom or selection, one at a time (closes this help or a menu first; in a field: leave it)'],
      ['right-click, long-press', 'the menu of a frame, a stack or a flame graph node: copy, focus, filter, show in timeline'],
    ],
  },
  {
    pane: 'Timeline',
    keys: [
      ['W / S', 'zoom in / out (physical keys: any keyboard layout)'],
      ['A / D', 'pan left / right'],
      ['↑ ↓ ← →', 'zoom and pan, while the pointer is over the timeline or it has the focus'],
      ['wheel', 'zoom around the pointer'],
      ['drag on the lanes', 'select a time range: every pane follows'],
      ['drag the time ruler, shift-drag', 'pan'],
      ['click an event', 'select its stack'],
    ],
  },
  {
    pane: 'Top stacks',
    keys: [
      ['/', 'filter: the frame as shown (__kmalloc+0x294), its function, or /regex/'],
      ['↑ / ↓, Home / End', 'move the selected row (click a row or Tab to the table first)'],
      ['click a column header', 'sort by it; again: the other way'],
      ['double-click a row, Enter', 'show it in the timeline'],
      ['click a frame of the selected stack', 'sandwich on its function'],
      ['ContextMenu key, Shift+F10', 'the selected row’s menu'],
      ['Esc in the filter', 'leave the field'],
    ],
  },
  {
    pane: 'Flame graph',
    keys: [
      ['click, double-click a frame', 'zoom to fit it; the breadcrumb goes back'],
      ['hover a frame', 'its weight, and the sym+0xoff frames merged into it'],
      ['right-click, long-press a frame', 'copy it, its call path, sandwich on it, highlight it'],
    ],
  },
  {
    pane: 'Generations',
    keys: [
      ['click a row, ↑ / ↓', 'choose a generation: every pane follows (click again: all)'],
      ['double-click a row', 'zoom the timeline to its span'],
      ['click a column header', 'sort by it'],
    ],
  },
  {
    pane: 'Menus',
    keys: [
      ['↑ / ↓, Home / End', 'move between items'],
      ['Enter', 'choose'],
      ['Esc, click elsewhere', 'close'],
    ],
  },
];

const typing = (t: EventTarget | null) => {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
};

/** "Zoom to fit" (`f`): the range, else the selected stack's occurrences, else the generation's span, else everything. */
export function zoomToFit(): void {
  const v = useViewStore.getState();
  if (v.range) return v.set({ window: v.range });
  if (v.stack !== null) return useMenuStore.getState().revealStack(v.stack);
  const g = useLoadStore.getState().overview?.generations.find((x) => x.generation === v.generation);
  if (v.generation !== null && g && g.firstTs < g.lastTs) return v.set({ window: [g.firstTs, g.lastTs] });
  v.set({ window: null });
}

/**
 * `?` opens it; the page-wide keys (`?`, `f`, Esc) are handled here, and so is the page's one
 * context menu (drawn by menu/ContextMenu.tsx). WASD are physical keys (KeyboardEvent.code).
 */
export function KeyboardHelp() {
  const open = useViewStore((v) => v.help);
  const set = useViewStore((v) => v.set);
  useEffect(() => {
    startUndo();
    const key = (e: KeyboardEvent) => {
      if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      const v = useViewStore.getState();
      if (e.key === '?') {
        e.preventDefault();
        v.set({ help: !v.help });
      } else if (e.key === 'Escape') {
        if (v.help) v.set({ help: false });
        else if (!undoLast() && v.range) v.set({ range: null });
      } else if (e.code === 'KeyF' && !e.shiftKey && !v.help) {
        e.preventDefault();
        zoomToFit();
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);
  return (
    <>
      <ContextMenuHost />
      {open && (
        <div className="modal-backdrop" onClick={() => set({ help: false })}>
          <div className="modal help" role="dialog" aria-label="keyboard help" data-testid="keyboard-help" onClick={(e) => e.stopPropagation()}>
            <h2>Keyboard and mouse</h2>
            <div className="help-panes">
              {KEYS.map((p) => (
                <section key={p.pane} data-testid="help-pane" data-pane={p.pane}>
                  <h3>{p.pane}</h3>
                  <dl className="help-keys">
                    {p.keys.map(([k, what]) => (
                      <div key={k}>
                        <dt>
                          <kbd>{k}</kbd>
                        </dt>
                        <dd>{what}</dd>
                      </div>
                    ))}
                  </dl>
                </section>
              ))}
            </div>
            <button type="button" onClick={() => set({ help: false })}>
              Close
            </button>
          </div>
        </div>
      )}
    </>
  );
}
