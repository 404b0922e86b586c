import './compare.css';
import { useShallow } from 'zustand/react/shallow';
import { useRef } from 'react';
import { useBaselineStore, useComparedGenerations } from '../../state/load/baseline-store.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { saveText } from '../exports/save.ts';
import { ingestWorker } from '../../state/load/load-worker.ts';
import { useSelection } from '../../state/view/view-store.ts';

/** "Compare with…": a second capture as the baseline (its files, or a folder's), read beside the open one. */
export function CompareButton() {
  const input = useRef<HTMLInputElement>(null);
  const open = useBaselineStore((s) => s.open);
  return (
    <>
      <button type="button" onClick={() => input.current?.click()} data-testid="compare-open" title="open a second capture as the baseline: the flame graph draws the differential, top stacks lists before, after and the change">
        Compare with…
      </button>
      <input
        ref={input}
        data-testid="compare-input"
        type="file"
        multiple
        hidden
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          if (files.length) void open(files.map((f) => ({ name: f.webkitRelativePath || f.name, blob: f })));
        }}
      />
    </>
  );
}

/**
 * While comparing: which capture is the baseline, both captures' totals, whether the baseline is
 * scaled to this capture's total (difffolded.pl -n), the folded diff export, and Stop comparing.
 */
export function CompareBar() {
  const b = useBaselineStore();
  const after = useLoadStore((s) => s.summary);
  const v = useViewStore(useShallow((s) => ({ compare: s.compare, normalize: s.compareNormalize, weight: s.flameWeight, frames: s.flameFrames, set: s.set })));
  const selection = useSelection();
  const generations = useComparedGenerations();
  if (generations) return <GenerationsBar generations={generations} />;
  if (b.status === 'none' && !v.compare) return null;
  if (b.status === 'loading') return <p className="panel compare-bar quiet" data-testid="compare-bar" data-status="loading">Reading the baseline {b.name}…</p>;
  if (b.status === 'error')
    return (
      <p className="panel compare-bar error" data-testid="compare-bar" data-status="error" role="alert">
        The baseline {b.name} could not be read: {b.error}{' '}
        <button type="button" onClick={() => void b.close()}>
          Dismiss
        </button>
      </p>
    );
  if (b.status !== 'loaded' || !b.summary) return null;
  const exportFolded = async () => {
    const text = await ingestWorker().compareFolded({ selection, weight: v.weight, ...(v.frames ? { granularity: v.frames } : {}), normalize: v.normalize });
    saveText(text, `diff-${b.name ?? 'baseline'}.folded`);
  };
  return (
    <div className="panel compare-bar" data-testid="compare-bar" data-status="loaded" data-baseline={b.name ?? ''}>
      <span>
        Comparing with <b className="mono">{b.name}</b> (before) ·{' '}
        <span data-testid="compare-before-events" data-value={b.summary.events}>
          before: {fmtInt(b.summary.events)} events, {fmtInt(b.summary.cookies + b.summary.fullStacks)} stack records
        </span>{' '}
        ·{' '}
        <span data-testid="compare-after-events" data-value={after?.events ?? 0}>
          after (this capture): {fmtInt(after?.events ?? 0)} events, {fmtInt((after?.cookies ?? 0) + (after?.fullStacks ?? 0))} stack records
        </span>
      </span>
      <span className="compare-legend" aria-label="colours">
        <i className="grew" /> grew <i className="shrank" /> shrank <i className="same" /> same
      </span>
      <label title="scale the baseline to this capture's total before comparing, as difffolded.pl -n does">
        <input type="checkbox" checked={v.normalize} onChange={(e) => v.set({ compareNormalize: e.target.checked })} data-testid="compare-normalize" /> normalise
      </label>
      <button type="button" onClick={() => void exportFolded()} data-testid="compare-export-folded" title="difffolded.pl's lines: STACK BEFORE AFTER, for flamegraph.pl">
        Export folded diff
      </button>
      <button type="button" onClick={() => void b.close()} data-testid="compare-close">
        Stop comparing
      </button>
      <span className="quiet">the baseline: all its stacks; this capture: the selection</span>
    </div>
  );
}

/** Comparing two generations of the open capture (the generation diff's A and B) in the same differential view. */
function GenerationsBar({ generations: [a, b] }: { generations: [number | 'none', number | 'none'] }) {
  const v = useViewStore(useShallow((s) => ({ normalize: s.compareNormalize, weight: s.flameWeight, frames: s.flameFrames, set: s.set })));
  const selection = useSelection();
  const exportFolded = async () => {
    const text = await ingestWorker().compareFolded({ selection, weight: v.weight, ...(v.frames ? { granularity: v.frames } : {}), normalize: v.normalize, generations: [a, b] });
    saveText(text, `diff-gen${a}-gen${b}.folded`);
  };
  return (
    <div className="panel compare-bar" data-testid="compare-bar" data-status="loaded" data-baseline={`gen:${a},${b}`}>
      <span>
        Comparing generation <b>{String(a)}</b> (before) with generation <b>{String(b)}</b> (after), in the selection’s range and CPUs
      </span>
      <span className="compare-legend" aria-label="colours">
        <i className="grew" /> grew <i className="shrank" /> shrank <i className="same" /> same
      </span>
      <label title="scale generation A to B's total before comparing, as difffolded.pl -n does">
        <input type="checkbox" checked={v.normalize} onChange={(e) => v.set({ compareNormalize: e.target.checked })} data-testid="compare-normalize" /> normalise
      </label>
      <button type="button" onClick={() => void exportFolded()} data-testid="compare-export-folded">
        Export folded diff
      </button>
      <button type="button" onClick={() => v.set({ compare: null })} data-testid="compare-close">
        Stop comparing
      </button>
    </div>
  );
}
