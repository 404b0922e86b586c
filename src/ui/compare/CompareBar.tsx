import './compare.css';
import { useShallow } from 'zustand/react/shallow';
import { useBaselineStore, useComparedGenerations } from '../../state/load/baseline-store.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { FilePicker } from '../common/FilePicker.tsx';
import { saveText } from '../exports/save.ts';
import { ingestWorker } from '../../state/load/load-worker.ts';
import { useSelection } from '../../state/view/view-store.ts';

/** "Compare with…": a second capture as the baseline (its files, or a folder's), read beside the open one. */
export function CompareButton() {
  const open = useBaselineStore((s) => s.open);
  return (
    <FilePicker
      label="Compare with…"
      testId="compare-input"
      buttonTestId="compare-open"
      title="open a second capture as the baseline: the flame graph draws the differential, top stacks lists before, after and the change"
      onFiles={(files) => void open(files)}
    />
  );
}

/**
 * While comparing: which capture is the baseline, both captures' totals, whether the baseline is
 * scaled to this capture's total (difffolded.pl -n), the folded diff export, and Stop comparing.
 */
export function CompareBar() {
  const b = useBaselineStore();
  const after = useLoadStore((s) => s.summary);
  const compare = useViewStore((s) => s.compare);
  const generations = useComparedGenerations();
  if (generations) return <GenerationsBar generations={generations} />;
  if (b.status === 'none' && !compare) return null;
  if (b.status === 'loading')
    return (
      <p className="panel compare-bar quiet" data-testid="compare-bar" data-status="loading">
        Reading the baseline {b.name}…
      </p>
    );
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
  return (
    <div
      className="panel compare-bar"
      data-testid="compare-bar"
      data-status="loaded"
      data-baseline={b.name ?? ''}
      data-kept={b.kept === null ? '' : String(b.kept.kept)}
    >
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
      <CompareControls fileName={`diff-${b.name ?? 'baseline'}.folded`} onClose={() => void b.close()} />
      <span className="quiet">
        the baseline: all its stacks; this capture: the selection{b.kept && !b.kept.kept ? ` · not kept for a reload: ${b.kept.reason}` : ''}
      </span>
    </div>
  );
}

/** The legend, normalise, the folded diff export and Stop comparing: both kinds of comparison's. */
function CompareControls({ generations, fileName, onClose }: { generations?: [number | 'none', number | 'none']; fileName: string; onClose(): void }) {
  const v = useViewStore(useShallow((s) => ({ normalize: s.compareNormalize, weight: s.flameWeight, frames: s.flameFrames, set: s.set })));
  const selection = useSelection();
  const exportFolded = async () => {
    const text = await ingestWorker().compareFolded({
      selection,
      weight: v.weight,
      ...(v.frames ? { granularity: v.frames } : {}),
      normalize: v.normalize,
      ...(generations ? { generations } : {}),
    });
    saveText(text, fileName);
  };
  return (
    <>
      <span className="compare-legend" aria-label="colours">
        <i className="grew" /> grew <i className="shrank" /> shrank <i className="same" /> same
      </span>
      <label title="scale the before side to the after side's total before comparing, as difffolded.pl -n does">
        <input type="checkbox" checked={v.normalize} onChange={(e) => v.set({ compareNormalize: e.target.checked })} data-testid="compare-normalize" />{' '}
        normalise
      </label>
      <button
        type="button"
        onClick={() => void exportFolded()}
        data-testid="compare-export-folded"
        title="difffolded.pl's lines: STACK BEFORE AFTER, for flamegraph.pl"
      >
        Export folded diff
      </button>
      <button type="button" onClick={onClose} data-testid="compare-close">
        Stop comparing
      </button>
    </>
  );
}

/** Comparing two generations of the open capture (the generation diff's A and B) in the same differential view. */
function GenerationsBar({ generations }: { generations: [number | 'none', number | 'none'] }) {
  const set = useViewStore((s) => s.set);
  const [a, b] = generations;
  return (
    <div className="panel compare-bar" data-testid="compare-bar" data-status="loaded" data-baseline={`gen:${a},${b}`}>
      <span>
        Comparing generation <b>{String(a)}</b> (before) with generation <b>{String(b)}</b> (after), in the selection’s range and CPUs
      </span>
      <CompareControls generations={generations} fileName={`diff-gen${a}-gen${b}.folded`} onClose={() => set({ compare: null })} />
    </div>
  );
}
