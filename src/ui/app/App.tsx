import { useEffect } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import { useApplyTheme } from '../../state/view/theme.ts';
import { Banners } from '../banner/Banners.tsx';
import { DiagnosticsPanel } from '../diagnostics/DiagnosticsPanel.tsx';
import { DropZone } from '../drop/DropZone.tsx';
import { FlameGraph } from '../flamegraph/FlameGraph.tsx';
import { GenerationSwitcher } from '../generations/GenerationSwitcher.tsx';
import { KeyboardHelp } from '../help/KeyboardHelp.tsx';
import { LoadProgressBar } from '../load/LoadProgressBar.tsx';
import { TopStacks } from '../stacks/TopStacks.tsx';
import { StatDashboard } from '../stats/StatDashboard.tsx';
import { SummaryPanel } from '../summary/SummaryPanel.tsx';
import { Timeline } from '../timeline/Timeline.tsx';
import { IdStoryPanel } from '../idstory/IdStoryPanel.tsx';
import { WhatIfPane } from '../whatif/WhatIfPane.tsx';
import { SqlPane } from '../sql/SqlPane.tsx';
import { Header } from './Header.tsx';
import { FilterBar } from '../filter/FilterBar.tsx';
import { CompareBar } from '../compare/CompareBar.tsx';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { SimulatorPane } from '../simulator/SimulatorPane.tsx';

/** A profiler's layout: timeline across the top, top stacks beside the flame graph, generations and the map's numbers below. */
export function App() {
  const status = useLoadStore((s) => s.status);
  const hasCapture = useLoadStore((s) => s.overview !== null);
  const pane = useSimStore((s) => s.pane);
  useApplyTheme();
  useEffect(() => {
    // the first thing a user sees is a real capture, not an empty page
    // (the capture kept in this browser from the last visit, else the sample)
    if (useLoadStore.getState().status === 'idle') void useLoadStore.getState().openInitial();
  }, []);
  return (
    <DropZone>
      <Header />
      {pane === 'simulator' ? (
        <SimulatorPane />
      ) : (
        <main className="content">
          <Banners />
          <LoadProgressBar />
          {status === 'error' && <ErrorBox />}
          {hasCapture && <FilterBar />}
          {hasCapture && <CompareBar />}
          <SummaryPanel />
          {hasCapture && (
            <>
              <Timeline />
              <IdStoryPanel />
              <div className="split">
                <TopStacks />
                <FlameGraph />
              </div>
              <div className="split">
                <GenerationSwitcher />
                <StatDashboard />
              </div>
              <WhatIfPane />
              <SqlPane />
            </>
          )}
          <DiagnosticsPanel />
        </main>
      )}
      <KeyboardHelp />
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
