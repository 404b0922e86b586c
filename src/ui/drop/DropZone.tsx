import { useEffect, useState, type ReactNode } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import type { LoadMode } from '../../state/load/load-types.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { AddOrReplace } from './AddOrReplace.tsx';
import './drop.css';

/**
 * Drop anything anywhere: the whole window is the drop target. While a capture of the user's is
 * open the overlay is two targets, "Add to this capture" and "Open as a new capture"; a drop
 * anywhere else asks (AddOrReplace). Over the embedded sample, or nothing, the files just open.
 */
export function DropZone({ children }: { children: ReactNode }) {
  const [over, setOver] = useState(false);
  const [hover, setHover] = useState<LoadMode | null>(null);
  const twoTargets = useLoadStore((s) => s.status === 'done' && s.source !== 'sample');
  const dimmed = useLoadStore((s) => s.status === 'done' && s.activity === 'loading');
  useEffect(() => {
    let depth = 0;
    const hasFiles = (e: DragEvent) => e.dataTransfer?.types.includes('Files') ?? false;
    const targetMode = (e: Event): LoadMode | null => {
      const el = e.target instanceof Element ? e.target.closest('[data-drop-mode]') : null;
      const m = el?.getAttribute('data-drop-mode');
      return m === 'add' || m === 'replace' ? m : null;
    };
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth++;
      setOver(true);
    };
    const leave = () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) {
        setOver(false);
        setHover(null);
      }
    };
    const overFn = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setHover(targetMode(e));
    };
    const drop = (e: DragEvent) => {
      e.preventDefault();
      depth = 0;
      setOver(false);
      setHover(null);
      const files = [...(e.dataTransfer?.files ?? [])].map((f) => ({ name: f.name, blob: f as Blob }));
      if (!files.length) return;
      useSimStore.getState().setPane('explorer');
      const mode = targetMode(e);
      const store = useLoadStore.getState();
      if (mode && store.status === 'done' && store.source !== 'sample') void store.load(files, 'files', mode);
      else store.offerFiles(files);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragleave', leave);
    window.addEventListener('dragover', overFn);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('dragover', overFn);
      window.removeEventListener('drop', drop);
    };
  }, []);
  return (
    <div className="app" data-testid="drop-zone" data-dragging={over || undefined} data-loading={dimmed || undefined}>
      {children}
      {over &&
        (twoTargets ? (
          <div className="drop-targets">
            <div className="drop-target" data-drop-mode="add" data-testid="add-files" data-hover={hover === 'add' || undefined}>
              <b>Add to this capture</b>
              <span>its dumps, kallsyms or another trace join the files already open</span>
            </div>
            <div className="drop-target" data-drop-mode="replace" data-testid="replace-files" data-hover={hover === 'replace' || undefined}>
              <b>Open as a new capture</b>
              <span>the files open on their own, in place of this capture</span>
            </div>
          </div>
        ) : (
          <div className="drop-overlay">
            <div>Drop a trace and its dumps: trace, stack_map, stack_map_bin, stack_map_stat, kallsyms</div>
          </div>
        ))}
      <AddOrReplace />
    </div>
  );
}
