import type { EventInfo } from '../../core/query/api.ts';
import { fmtTs } from '../common/format.ts';

/** The event under the pointer: time, task, event, its stack record and the top of its stack. */
export function EventTooltip({ x, y, width, height, info }: { x: number; y: number; width: number; height: number; info: EventInfo }) {
  const left = x > width - 340 ? Math.max(0, x - 330) : x + 14;
  // below the pointer in the upper half, above it in the lower half, so it stays near the lanes
  const style = y < height / 2 ? { left, top: y + 14 } : { left, top: y - 10, transform: 'translateY(-100%)' };
  return (
    <div className="tooltip" style={style} data-testid="timeline-tooltip">
      <div>
        <b>{info.name}</b> at {fmtTs(info.ts)} s
      </div>
      <div className="quiet">
        {info.task}-{info.pid} on CPU {info.cpu}
      </div>
      <div>
        {info.status}
        {info.generation !== null ? ` · gen ${info.generation}` : ''}
        {info.slot !== null ? ` · slot ${info.slot}` : ''}
      </div>
      {info.truth && (
        <div className={info.truth.outcome === 'wrong' ? 'bad' : 'quiet'} data-testid="timeline-tooltip-truth" data-outcome={info.truth.outcome}>
          {info.truth.outcome === 'wrong'
            ? `the simulator's ledger: wrong. This id was written in generation ${info.truth.generation} for another stack (the run's stack ${info.truth.stack}); its slot held this one when the map was read`
            : `the simulator's ledger: ${info.truth.outcome}${info.truth.outcome === 'correct' ? ` (the run's stack ${info.truth.stack})` : ''}`}
        </div>
      )}
      {info.frames.length > 0 && (
        <ol className="frames-preview">
          {info.frames.slice(0, 8).map((f, i) => (
            <li key={i}>{f}</li>
          ))}
        </ol>
      )}
      {info.frames.length > 8 && <div className="quiet">… {info.frames.length - 8} more frames</div>}
    </div>
  );
}
