import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';

/** CPUs to include: none pressed means every CPU. The choice filters every pane. */
export function CpuPicker() {
  const cpus = useLoadStore((s) => s.overview?.cpus ?? []);
  const chosen = useViewStore((v) => v.cpus);
  const set = useViewStore((v) => v.set);
  if (cpus.length < 2) return null;
  const toggle = (c: number) => {
    const now = new Set(chosen ?? []);
    if (now.has(c)) now.delete(c);
    else now.add(c);
    const next = [...now].sort((a, b) => a - b);
    set({ cpus: next.length === 0 || next.length === cpus.length ? null : next });
  };
  return (
    <div className="segmented cpus" role="group" aria-label="CPU filter" title="filter every pane by CPU; none pressed: all CPUs">
      <span className="quiet">CPU</span>
      {cpus.map((c) => (
        <button key={c} type="button" aria-pressed={chosen?.includes(c) ?? false} onClick={() => toggle(c)} data-testid={`cpu-${c}`}>
          {c}
        </button>
      ))}
    </div>
  );
}
