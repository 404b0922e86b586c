import { useLoadStore } from '../../state/load/load-store.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { fmtBytes } from '../common/format.ts';
import { ExportMenu } from '../exports/ExportMenu.tsx';
import { ThemeSwitch } from './ThemeSwitch.tsx';
import { CompareButton } from '../compare/CompareBar.tsx';
import { FilePicker } from '../common/FilePicker.tsx';
import { Notice } from '../common/Notice.tsx';
import { SAMPLE_NOTE } from '../../core/formats/seed-notes.ts';

export function Header() {
  const offerFiles = useLoadStore((s) => s.offerFiles);
  const loadSample = useLoadStore((s) => s.loadSample);
  const ready = useLoadStore((s) => s.status === 'done');
  const setView = useViewStore((s) => s.set);
  const pane = useSimStore((s) => s.pane);
  const setPane = useSimStore((s) => s.setPane);
  const isolated = globalThis.crossOriginIsolated === true;
  // the notice sits under the header, full width: one line about what a link carried that the capture lacks
  return (
    <>
      <header className="header">
        <h1>
          stackmap <span className="light">explorer</span>
        </h1>
        {ready && pane !== 'simulator' && <ExportMenu />}
        <div className="actions">
          <span className="view-switch" role="group" aria-label="view">
            <button type="button" aria-pressed={pane !== 'simulator'} onClick={() => setPane('explorer')} data-testid="view-explorer">
              Explorer
            </button>
            <button
              type="button"
              aria-pressed={pane === 'simulator'}
              onClick={() => setPane('simulator')}
              data-testid="view-simulator"
              title="the stack map's insert and reset paths, live, one Web Worker per CPU"
            >
              Simulator
            </button>
          </span>
          <FilePicker
            label="Open files…"
            testId="file-input"
            onFiles={(files) => {
              setPane('explorer');
              offerFiles(files);
            }}
          />
          {ready && pane !== 'simulator' && <CompareButton />}
          <button type="button" onClick={() => void loadSample()} title={`the sample: ${SAMPLE_NOTE}`} data-testid="open-sample">
            Open sample
          </button>
          <KeptCapture />
          <ThemeSwitch />
          <button type="button" onClick={() => setView({ help: true })} title="keyboard help (?)" aria-label="keyboard help" data-testid="help-button">
            ?
          </button>
          <span
            className={isolated ? 'badge ok isolation' : 'badge warn isolation'}
            data-testid="isolation"
            title={
              isolated
                ? 'crossOriginIsolated: SharedArrayBuffer is available for the simulator'
                : 'not cross-origin isolated: the server must send COOP same-origin and COEP require-corp'
            }
          >
            {isolated ? 'isolated' : 'not isolated'}
          </span>
        </div>
      </header>
      <Notice />
    </>
  );
}

/** Whether the capture shown is kept in this browser for the next visit, and the button that forgets it. */
function KeptCapture() {
  const keep = useLoadStore((s) => s.keep);
  const forget = useLoadStore((s) => s.forget);
  if (keep.state === 'off') return null;
  if (keep.state === 'saving') {
    return (
      <span className="badge" data-testid="keep-state" data-state="saving" title="writing the capture's files to this browser's storage">
        keeping…
      </span>
    );
  }
  if (keep.state === 'not-kept') {
    return (
      <span
        className="badge warn"
        data-testid="keep-state"
        data-state="not-kept"
        title={`not kept for the next visit: ${keep.reason}; a reload opens the sample`}
      >
        not kept
      </span>
    );
  }
  return (
    <span className="kept" role="group" aria-label="kept in this browser">
      <span
        className="badge ok"
        data-testid="keep-state"
        data-state="kept"
        data-backend={keep.backend}
        title={`this capture's files (${fmtBytes(keep.bytes)}) are kept in this browser (${keep.backend === 'opfs' ? 'origin private file system' : 'IndexedDB'}), never sent anywhere: a reload reopens it`}
      >
        kept
      </span>
      <button type="button" data-testid="forget-capture" title="delete the kept files from this browser and open the sample" onClick={() => void forget()}>
        Forget
      </button>
    </span>
  );
}
