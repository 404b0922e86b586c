import { useState } from 'react';
import { describeTransform } from '../../core/query/flame-transforms.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { addTransform } from '../menu/actions.ts';

/**
 * The flame graph's transforms, in the order applied: each a chip whose × takes it and the ones
 * after it off (they were applied to what it made), and a box that drops the frames of every
 * function matching a pattern. Each change is a history entry: Back undoes it.
 */
export function TransformCrumbs() {
  const list = useViewStore((v) => v.flameTransforms);
  const set = useViewStore((v) => v.set);
  const [drop, setDrop] = useState('');
  return (
    <nav className="breadcrumb transforms" aria-label="flame graph transforms" data-testid="flame-transforms" data-count={list.length}>
      {list.length > 0 && <span className="quiet">transforms:</span>}
      {list.map((t, i) => (
        <span key={i} className="chip transform" data-testid="flame-transform" data-kind={t.kind}>
          {describeTransform(t)}
          <button
            type="button"
            className="link"
            aria-label={`remove ${describeTransform(t)}${i < list.length - 1 ? ' and the ones after it' : ''}`}
            onClick={() => set({ flameTransforms: list.slice(0, i), flameZoom: [] })}
          >
            ×
          </button>
        </span>
      ))}
      <form
        className="transform-drop"
        onSubmit={(e) => {
          e.preventDefault();
          if (drop.trim()) addTransform({ kind: 'drop', pattern: drop.trim() });
          setDrop('');
        }}
      >
        <input
          className="search"
          value={drop}
          onChange={(e) => setDrop(e.target.value)}
          placeholder="drop frames: function, /regex/"
          title="take every frame whose function matches out of every stack (Enter), e.g. /^entry_SYSCALL|^do_syscall_64$/; right-click a node to focus on its subtree, merge it or collapse its recursion"
          data-testid="flame-drop"
          spellCheck={false}
        />
      </form>
    </nav>
  );
}
