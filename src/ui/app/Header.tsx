import { useRef } from 'react';
import { useLoadStore } from '../../state/load-store.ts';
import { useViewStore } from '../../state/view-store.ts';
import { useSimStore } from '../../state/sim-store.ts';
import { ExportMenu } from '../exports/ExportMenu.tsx';
import { ThemeSwitch } from './ThemeSwitch.tsx';
import { Notice } from '../common/Notice.tsx';

export function Header() {
  const input = useRef<HTMLInputElement>(null);
  const load = useLoadStore((s) => s.load);
  const loadSample = useLoadStore((s) => s.loadSample);
  const loading = useLoadStore((s) => s.status === 'loading');
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
          <button type="button" aria-pressed={pane === 'simulator'} onClick={() => setPane('simulator')} data-testid="view-simulator" title="the stack map's insert and reset paths, live, one Web Worker per CPU">
            Simulator
          </button>
        </span>
        <button type="button" onClick={() => input.current?.click()} disabled={loading}>
          Open files…
        </button>
        <input
          ref={input}
          data-testid="file-input"
          type="file"
          multiple
          hidden
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            e.currentTarget.value = '';
            if (files.length) void load(files.map((f) => ({ name: f.name, blob: f })), 'files');
          }}
        />
        <button type="button" onClick={() => void loadSample()} disabled={loading}>
          Open sample
        </button>
        <ThemeSwitch />
        <button type="button" onClick={() => setView({ help: true })} title="keyboard help (?)" aria-label="keyboard help" data-testid="help-button">
          ?
        </button>
        <span
          className={isolated ? 'badge ok' : 'badge warn'}
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
