import type { CSSProperties } from 'react';
import { besideV7Doc, V7_DOC_FIGURES } from '../../core/capture/v7-doc-figures.ts';

/**
 * The v7 document's own figures (its Performance section) beside a capture's (`of`: stack
 * records, dedup rate, stack bytes with and without the map), labelled as the document's: its
 * measurement, not this capture's. The stack map pane's and the what-if pane's, by `id`.
 */
export function V7DocTable({
  of,
  id,
  side,
  beside,
  style,
  data,
}: {
  of: Parameters<typeof besideV7Doc>[0];
  id: string;
  side: string;
  beside: string;
  style?: CSSProperties;
  data?: Record<string, string | number>;
}) {
  return (
    <table className="grid seed-figures" style={{ marginTop: 8, ...style }} data-testid={id} {...data}>
      <caption className="quiet">
        The v7 document&apos;s own figures ({V7_DOC_FIGURES.where.replace(/^the v7 document, /, '')}) beside {beside}
      </caption>
      <thead>
        <tr>
          <th />
          <th title="Documentation/trace/ftrace-stackmap.rst as the v7 patch adds it: its measurement, not this capture's">the v7 document&apos;s</th>
          <th>{side}</th>
        </tr>
      </thead>
      <tbody>
        {besideV7Doc(of).map((f) => (
          <tr key={f.id} data-testid={`${id}-row`} data-id={f.id}>
            <td>{f.what}</td>
            <td data-testid={`${id}-doc`}>{f.doc}</td>
            <td data-testid={`${id}-model`}>{f.model}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
