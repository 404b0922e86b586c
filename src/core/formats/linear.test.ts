import { describe, expect, it } from 'vitest';
import { DiagnosticLog } from './diagnostics.ts';
import { FILLERS, hostileCases, hostileInput } from '../testing/hostile-inputs.ts';
import { parserForKind } from './registry.ts';
import { sniffKind } from './sniff.ts';
import { feedChunks } from '../testing/formats.ts';
import type { TraceSink } from './types.ts';

// Linear time by construction (no regex that backtracks on untrusted text): every reader and
// the sniffer read 4 MB of each blank-like character and of the characters the old regexes
// backtracked on, alone and after the prefixes that route a line to each reader, and finish.
// No timing assertion here: the readers this replaced took 17-60 s on 1 MB of such input and
// minutes on 4 MB, so a quadratic reader fails by the test's timeout. The ratio (4x the input
// costs under 6x the time) is measured by bench/linear.ts, row `linear-worst-ratio`.

const nullSink: TraceSink = { event: () => {}, stackRecord: () => {}, lost: () => {} };
const MB4 = 4 * 1024 * 1024;

describe('every reader gets through hostile input', () => {
  it.each(hostileCases())(
    '%s after %j (lines: %s)',
    (kind, prefix, lines) => {
      for (const f of FILLERS) {
        const bytes = hostileInput(prefix, f, MB4, lines);
        if (kind === 'unknown') {
          expect(typeof sniffKind(bytes)).toBe('string');
          continue;
        }
        const r = feedChunks(
          parserForKind(kind, { file: 'f', diagnostics: new DiagnosticLog('f') }, () => nullSink),
          bytes,
          1 << 16,
        );
        expect(r, `filler ${JSON.stringify(f)}`).toBeTypeOf('object');
      }
    },
    120_000,
  );
});
