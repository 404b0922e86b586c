import { STATUS_COLORS, STATUS_LABELS } from '../common/colors.ts';

const TITLES = [
  'a v8 cookie found in the dump of its generation',
  'no dump of that generation was loaded',
  'the dump of that generation lacks the slot (inserted after the dump was read)',
  'a v7 id looked up in a generation-less dump: a reset in between would make it another stack',
  'a v7 id that generation-less dumps disagree on',
  'the map could not store it, so the kernel wrote the stack in full (not a loss)',
  'a user-space stack',
  'a v7 id whose event names a function (call_site=, ip=, FUNC <-PARENT) that its resolved stack lacks: the slot held another stack',
  'an event without a stack record',
];

export function StatusLegend({ segmented = false }: { segmented?: boolean }) {
  return (
    <ul className="legend" aria-label="status colours">
      {STATUS_LABELS.map((l, i) =>
        i === 6 ? null : (
          <li key={l} title={TITLES[i]}>
            <span className="swatch" style={{ background: STATUS_COLORS[i] }} />
            {l}
          </li>
        ),
      )}
      <li title="CPU:N [LOST M EVENTS]: the ring buffer of that CPU overflowed here; the events lost are not in the trace">
        <span className="lost-mark" aria-hidden="true">
          ▼
        </span>
        lost events
      </li>
      <li title="a reset of the map: the next generation starts">
        <span className="reset-mark" aria-hidden="true">
          ┆
        </span>
        reset
      </li>
      {segmented && (
        <li title="unrelated time ranges (another trace file, or another run quoted in the same file) are side by side; the time between them is left out">
          <span aria-hidden="true" style={{ fontWeight: 700, marginRight: 4 }}>
            //
          </span>
          break between segments
        </li>
      )}
    </ul>
  );
}
