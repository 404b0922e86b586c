import { useEffect, useRef } from 'react';
import { SCENARIO_NAMES, SCENARIOS, type ScenarioName } from '../../core/sim/scenarios.ts';
import { useScenarioStore } from '../../state/sim/sim-scenario.ts';
import { useSimStore } from '../../state/sim/sim-store.ts';
import { fmtInt } from '../common/format.ts';
import { IdStories } from './IdStories.tsx';

/**
 * The guided scenarios: each a named preset with what to watch, a Run button that sets the pane
 * and runs to the end, and the verdict beside the expected one (DESIGN 5.2: `sim-scenario` with
 * `data-scenario`, `sim-verdict`).
 */
export function ScenarioList() {
  const { running, results, error, run, last } = useScenarioStore();
  const status = useSimStore((s) => s.status);
  const busy = running !== null || status === 'running' || status === 'starting' || status === 'stopping';
  const isolated = globalThis.crossOriginIsolated === true;
  return (
    <section className="panel sim-scenarios" aria-label="guided scenarios">
      <h2>
        Guided scenarios <span className="sim-hint">each sets the pane, runs to the end and checks that its effect appeared</span>
      </h2>
      <ol>
        {SCENARIO_NAMES.map((name) => (
          <Item
            key={name}
            name={name}
            busy={busy || !isolated}
            running={running === name}
            onRun={() => void run(name)}
            result={results[name]}
            last={last === name && status === 'stopped'}
          />
        ))}
      </ol>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function Item({
  name,
  busy,
  running,
  onRun,
  result,
  last,
}: {
  name: ScenarioName;
  busy: boolean;
  running: boolean;
  onRun: () => void;
  result: ReturnType<typeof useScenarioStore.getState>['results'][ScenarioName];
  last: boolean;
}) {
  const sc = SCENARIOS[name];
  const state = running ? 'running' : result ? (result.effect.ok ? 'seen' : 'not-seen') : 'idle';
  const ref = useRef<HTMLLIElement>(null);
  const was = useRef(state);
  // a run ends: its verdict into view (at 1280x720 it sat far below the fold)
  useEffect(() => {
    if (was.current === 'running' && state !== 'running') ref.current?.scrollIntoView({ block: 'start' });
    was.current = state;
  }, [state]);
  return (
    <li ref={ref} data-testid="sim-scenario" data-scenario={name} data-state={state} className={`sim-scenario ${state}`}>
      <div className="sim-scenario-head">
        <button type="button" data-testid="sim-scenario-run" disabled={busy} onClick={onRun} title={`runs: cli simulate --scenario ${name}`}>
          {running ? 'Running…' : '▶ Run'}
        </button>
        <span className="sim-scenario-name">
          <b>{sc.title}</b>
          <code className="sim-hint">{name}</code>
        </span>
      </div>
      <div className="sim-scenario-body">
        <p className="sim-scenario-watch">{sc.watch}</p>
        <p className="sim-scenario-verdict">
          expected: {sc.expected}
          {result && (
            <span data-testid="sim-verdict" data-ok={String(result.effect.ok)} data-value={result.effect.value} className={result.effect.ok ? 'ok' : 'bad'}>
              {' · '}
              {result.effect.ok ? 'seen' : 'not seen'}: {fmtInt(result.effect.value)} {result.effect.what}
            </span>
          )}
        </p>
      </div>
      {/* the run just ended: the story of one of its wrong or detected ids, under the verdict */}
      {result && last && <IdStories />}
    </li>
  );
}
