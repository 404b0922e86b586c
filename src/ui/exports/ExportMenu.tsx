import { useState } from 'react';
import { useComparedGenerations, useComparing } from '../../state/load/baseline-store.ts';
import { useShallow } from 'zustand/react/shallow';
import type { ExportKind } from '../../core/query/api.ts';
import { ask } from '../../state/view/queries.ts';
import { useSelection, useViewStore } from '../../state/view/view-store.ts';
import { exportFileName } from './file-name.ts';
import { useLoadStore } from '../../state/load/load-store.ts';

const KINDS: { kind: ExportKind; label: string; type: string; title: string; stackcollapse?: boolean }[] = [
  {
    kind: 'folded',
    label: 'Folded',
    type: 'text/plain',
    title: 'folded stacks (flamegraph.pl, inferno, speedscope), frames as the flame graph shows them: by call site (sym+0xoff) or by function',
  },
  {
    kind: 'folded',
    label: 'stackcollapse',
    type: 'text/plain',
    title: "folded stacks exactly as FlameGraph's stackcollapse-perf.pl prints them (process first, names tidied, periods)",
    stackcollapse: true,
  },
  { kind: 'svg', label: 'SVG', type: 'image/svg+xml', title: 'the flame graph as it is shown, as SVG' },
  {
    kind: 'speedscope',
    label: 'speedscope',
    type: 'application/json',
    title: 'a speedscope profile (speedscope.app), frames as the flame graph shows them: by call site (sym+0xoff) or by function',
  },
  {
    kind: 'chrome-trace',
    label: 'Chrome trace',
    type: 'application/json',
    title: 'Chrome trace event JSON: opens in Perfetto (ui.perfetto.dev) and chrome://tracing',
  },
];

/** Downloads the current selection in the formats other tools read. */
export function ExportMenu() {
  const selection = useSelection();
  // its own slice: a zoom or pan of the timeline does not re-render the menu
  const { flameMode, flameWeight, flameFocus, flameFrames, flameGroup, compareNormalize, compareWidths } = useViewStore(
    useShallow((v) => ({
      flameMode: v.flameMode,
      flameWeight: v.flameWeight,
      flameFocus: v.flameFocus,
      flameFrames: v.flameFrames,
      flameGroup: v.flameGroup,
      compareNormalize: v.compareNormalize,
      compareWidths: v.compareWidths,
    })),
  );
  // comparing, top-down and ungrouped: the SVG is the differential the flame graph shows
  const generations = useComparedGenerations();
  const differential = useComparing() && flameMode === 'top-down' && !flameGroup && !flameWeight.startsWith('field:');
  // the stackcollapse-perf.pl form is offered for perf script input, what that script reads
  const perf = useLoadStore((s) => s.overview?.granularity === 'function');
  const filtered = useLoadStore((s) => s.filterOf !== '');
  const kinds = KINDS.filter((k) => !k.stackcollapse || perf);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const save = async (k: (typeof KINDS)[number]) => {
    setBusy(k.label);
    setError(null);
    try {
      // the SVG, folded and speedscope files hold the frames the flame graph shows (its frames= setting,
      // else the capture's own granularity); stackcollapse-perf.pl's form has its own
      const text = await ask.exportSelection(k.kind, selection, {
        mode: flameMode,
        weight: flameWeight,
        focus: flameFocus,
        title: 'stackmap explorer selection',
        ...(k.kind !== 'chrome-trace' && !k.stackcollapse && flameFrames ? { granularity: flameFrames } : {}),
        ...(k.stackcollapse ? { stackcollapse: true } : {}),
        ...(k.kind === 'svg' && differential
          ? { compare: { normalize: compareNormalize, widths: compareWidths, ...(generations ? { generations } : {}) } }
          : {}),
        // the flame graph's groups: a root frame per group in the folded and speedscope files
        ...(flameGroup && (k.kind === 'folded' || k.kind === 'speedscope') && !k.stackcollapse ? { group: flameGroup } : {}),
      });
      const url = URL.createObjectURL(new Blob([text], { type: k.type }));
      const a = document.createElement('a');
      a.href = url;
      // the name says what the file holds: stackmap-gen2-12.3s-14.1s-cpu0,1.folded
      a.download = exportFileName(k.kind, selection, { mode: flameMode, weight: flameWeight, focus: flameFocus, filtered }).replace(
        /\.folded$/,
        k.stackcollapse ? '.stackcollapse.folded' : '.folded',
      );
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
      {kinds.map((k) => (
        <button
          key={k.label}
          type="button"
          title={`${k.title}: ${exportFileName(k.kind, selection, { mode: flameMode, weight: flameWeight, focus: flameFocus, filtered })}`}
          onClick={() => void save(k)}
          disabled={busy !== null}
          data-testid={k.stackcollapse ? 'export-stackcollapse' : `export-${k.kind}`}
        >
          {k.label}
        </button>
      ))}
      {error && <span className="warn">{error}</span>}
    </div>
  );
}
