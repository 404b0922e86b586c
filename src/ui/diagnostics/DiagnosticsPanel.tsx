import { Fragment } from 'react';
import { describeCapture } from '../../core/formats/capture-info.ts';
import { binVersionNote } from '../../core/formats/seed-notes.ts';
import type { FileReport } from '../../core/capture/ingest.ts';
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
                    <td colSpan={4} className="quiet">
                      {describeCapture(f.capture)}
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
      <BinVersionNotes files={s.files} />
      <h2>
        Diagnostics <span className="count">{s.diagnostics.length}</span>
      </h2>
      {s.diagnostics.length === 0 ? (
        <p className="quiet">Every line and byte was understood.</p>
      ) : (
        <ul className="diag-list">
          {s.diagnostics.map((d, i) => (
            <li key={i} data-testid="diagnostic">
              <span className="file">{d.file}</span> <span className="where">{d.where}</span> <span className="message">{d.message}</span>
              {d.count > 1 && <span className="count"> ×{d.count}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** What the seeds say of each stack_map_bin version loaded (seed-notes.ts), once per version, naming its files. */
function BinVersionNotes({ files }: { files: readonly FileReport[] }) {
  const byVersion = new Map<string, string[]>();
  for (const f of files) if (f.kind === 'stack_map_bin' && f.binVersion) byVersion.set(f.binVersion, [...(byVersion.get(f.binVersion) ?? []), f.file]);
  if (byVersion.size === 0) return null;
  return (
    <>
      {[...byVersion].map(([version, names]) => (
        <p key={version} className="quiet" data-testid="file-seed-note" data-version={version} style={{ fontSize: 12, margin: '4px 0' }}>
          {names.join(', ')}: {binVersionNote(version)}
        </p>
      ))}
    </>
  );
}
