import { Fragment } from 'react';
import { describeCapture } from '../../core/formats/capture-info.ts';
import { useLoadStore } from '../../state/load/load-store.ts';
import { fmtInt } from '../common/format.ts';

/** Every file with what was used of it, and everything that was not understood. */
export function DiagnosticsPanel() {
  const s = useLoadStore((st) => st.summary);
  if (!s) return null;
  return (
    <section className="panel diagnostics" data-testid="diagnostics" aria-label="files and diagnostics">
      <h2>Files</h2>
      <table className="files">
        <thead>
          <tr>
            <th>file</th>
            <th>kind</th>
            <th>used</th>
            <th>not used</th>
          </tr>
        </thead>
        <tbody>
          {s.files.map((f) => {
            const acc = f.lines ?? f.bytes;
            const unit = f.lines ? 'lines' : 'bytes';
            return (
              <Fragment key={f.file}>
                <tr data-testid="file-row" data-kind={f.kind}>
                  <td>{f.file}</td>
                  <td>{f.kind.replaceAll('_', ' ')}</td>
                  <td>{acc ? `${fmtInt(acc.used)} of ${fmtInt(acc.total)} ${unit}` : ''}</td>
                  <td className={acc && acc.unused > 0 ? 'warn' : ''}>{acc ? acc.unused : ''}</td>
                </tr>
                {f.capture && (
                  // what capture.sh recorded of the capture (core/formats/capture-info.ts)
                  <tr data-testid="file-capture-facts" data-buffer-kb={f.capture.bufferKb ?? ''}>
                    <td colSpan={4} className="quiet">{describeCapture(f.capture)}</td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
      <h2>
        Diagnostics <span className="count">{s.diagnostics.length}</span>
      </h2>
      {s.diagnostics.length === 0 ? (
        <p className="quiet">Every line and byte was understood.</p>
      ) : (
        <ul className="diag-list">
          {s.diagnostics.map((d, i) => (
            <li key={i} data-testid="diagnostic">
              <span className="file">{d.file}</span> <span className="where">{d.where}</span>{' '}
              <span className="message">{d.message}</span>
              {d.count > 1 && <span className="count"> ×{d.count}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
