import { useRef } from 'react';
import { useLoadStore } from '../../state/load-store.ts';

export function Header() {
  const input = useRef<HTMLInputElement>(null);
  const load = useLoadStore((s) => s.load);
  const loadSample = useLoadStore((s) => s.loadSample);
  const loading = useLoadStore((s) => s.status === 'loading');
  const isolated = globalThis.crossOriginIsolated === true;
  return (
    <header className="header">
      <h1>
        stackmap <span className="light">explorer</span>
      </h1>
      <div className="actions">
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
  );
}
