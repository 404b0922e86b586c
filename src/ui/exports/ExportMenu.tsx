import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { ExportKind } from '../../core/query/api.ts';
import { ask } from '../../state/view/queries.ts';
import { useSelection, useViewStore } from '../../state/view/view-store.ts';
import { exportFileName } from './file-name.ts';

const KINDS: { kind: ExportKind; label: string; type: string; title: string }[] = [
  { kind: 'folded', label: 'Folded', type: 'text/plain', title: 'folded stacks, frames as sym+0xoff (flamegraph.pl, inferno, speedscope)' },
  { kind: 'svg', label: 'SVG', type: 'image/svg+xml', title: 'the flame graph as it is shown, as SVG' },
  { kind: 'speedscope', label: 'speedscope', type: 'application/json', title: 'a speedscope profile (speedscope.app), frames as sym+0xoff' },
  { kind: 'chrome-trace', label: 'Chrome trace', type: 'application/json', title: 'Chrome trace event JSON: opens in Perfetto (ui.perfetto.dev) and chrome://tracing' },
];

/** Downloads the current selection in the formats other tools read. */
export function ExportMenu() {
  const selection = useSelection();
  // its own slice: a zoom or pan of the timeline does not re-render the menu
  const { flameMode, flameWeight, flameFocus } = useViewStore(useShallow((v) => ({ flameMode: v.flameMode, flameWeight: v.flameWeight, flameFocus: v.flameFocus })));
  const [busy, setBusy] = useState<ExportKind | null>(null);
  const [error, setError] = useState<string | null>(null);
  const save = async (k: (typeof KINDS)[number]) => {
    setBusy(k.kind);
    setError(null);
    try {
      const text = await ask.exportSelection(k.kind, selection, { mode: flameMode, weight: flameWeight, focus: flameFocus, title: 'stackmap explorer selection' });
      const url = URL.createObjectURL(new Blob([text], { type: k.type }));
      const a = document.createElement('a');
      a.href = url;
      // the name says what the file holds: stackmap-gen2-12.3s-14.1s-cpu0,1.folded
      a.download = exportFileName(k.kind, selection, { mode: flameMode, weight: flameWeight, focus: flameFocus });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="exports" role="group" aria-label="export the selection">
      <span className="quiet">Export</span>
      {KINDS.map((k) => (
        <button
          key={k.kind}
          type="button"
          title={`${k.title}: ${exportFileName(k.kind, selection, { mode: flameMode, weight: flameWeight, focus: flameFocus })}`}
          onClick={() => void save(k)}
          disabled={busy !== null}
          data-testid={`export-${k.kind}`}
        >
          {k.label}
        </button>
      ))}
      {error && <span className="warn">{error}</span>}
    </div>
  );
}
