import { useEffect } from 'react';
import { useViewStore } from '../../state/view-store.ts';

const KEYS: [string, string][] = [
  ['W / S, ↑ / ↓', 'zoom the timeline in / out'],
  ['A / D, ← / →', 'pan the timeline (arrows when the pointer is over it)'],
  ['wheel', 'zoom the timeline around the pointer'],
  ['drag on the timeline', 'select a time range: every pane follows'],
  ['drag the time ruler, shift-drag', 'pan'],
  ['click an event', 'select its stack'],
  ['Esc', 'clear the range, or close this help'],
  ['/', 'filter the top stacks'],
  ['?', 'this help'],
];

/** `?` opens it; WASD are physical keys (KeyboardEvent.code), so they work on any layout. */
export function KeyboardHelp() {
  const open = useViewStore((v) => v.help);
  const set = useViewStore((v) => v.set);
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t && ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName)) return;
      const v = useViewStore.getState();
      if (e.key === '?') {
        e.preventDefault();
        v.set({ help: !v.help });
      } else if (e.key === 'Escape') {
        if (v.help) v.set({ help: false });
        else if (v.range) v.set({ range: null });
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);
  if (!open) return null;
  return (
    <div className="modal-backdrop" onClick={() => set({ help: false })}>
      <div className="modal" role="dialog" aria-label="keyboard help" data-testid="keyboard-help" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard and mouse</h2>
        <table className="grid">
          <tbody>
            {KEYS.map(([k, what]) => (
              <tr key={k}>
                <td>
                  <kbd>{k}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="button" onClick={() => set({ help: false })}>
          Close
        </button>
      </div>
    </div>
  );
}
