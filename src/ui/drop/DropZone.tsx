import { useEffect, useState, type ReactNode } from 'react';
import { useLoadStore } from '../../state/load-store.ts';

/** Drop anything anywhere: the whole window is the drop target. */
export function DropZone({ children }: { children: ReactNode }) {
  const [over, setOver] = useState(false);
  const load = useLoadStore((s) => s.load);
  useEffect(() => {
    let depth = 0;
    const hasFiles = (e: DragEvent) => e.dataTransfer?.types.includes('Files') ?? false;
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth++;
      setOver(true);
    };
    const leave = () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const overFn = (e: DragEvent) => {
      if (hasFiles(e)) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      e.preventDefault();
      depth = 0;
      setOver(false);
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) void load(files.map((f) => ({ name: f.name, blob: f })), 'files');
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
  }, [load]);
  return (
    <div className="app" data-testid="drop-zone" data-dragging={over || undefined}>
      {children}
      {over && (
        <div className="drop-overlay">
          <div>Drop a trace and its dumps: trace, stack_map, stack_map_bin, stack_map_stat, kallsyms</div>
        </div>
      )}
    </div>
  );
}
