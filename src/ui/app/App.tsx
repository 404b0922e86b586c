import { useEffect } from 'react';
import { useLoadStore } from '../../state/load-store.ts';
import { DiagnosticsPanel } from '../diagnostics/DiagnosticsPanel.tsx';
import { DropZone } from '../drop/DropZone.tsx';
import { LoadProgressBar } from '../load/LoadProgressBar.tsx';
import { SummaryPanel } from '../summary/SummaryPanel.tsx';
import { Header } from './Header.tsx';

export function App() {
  const status = useLoadStore((s) => s.status);
  useEffect(() => {
    // the first thing a user sees is a real capture, not an empty page
    if (useLoadStore.getState().status === 'idle') void useLoadStore.getState().loadSample();
  }, []);
  return (
    <DropZone>
      <Header />
      <main className="content">
        <LoadProgressBar />
        {status === 'error' && <ErrorBox />}
        <SummaryPanel />
        <DiagnosticsPanel />
      </main>
    </DropZone>
  );
}

function ErrorBox() {
  const error = useLoadStore((s) => s.error);
  return (
    <div className="error" role="alert">
      {error}
    </div>
  );
}
