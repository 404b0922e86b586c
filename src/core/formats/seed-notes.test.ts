import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingestFiles } from '../testing/test-helpers.ts';
import { REPO_ROOT } from '../testing/real-traces-dir.ts';
import { binVersionNote, SAMPLE_NOTE, V8_FOLLOW_UP } from './seed-notes.ts';
import { writeStackMapBin } from './stack-map-write.ts';

// What the page and `generate` say of stack_map_bin's versions (issue 36), held to the seeds'
// words where the checkout has them (../shared/seeds/, as the project was created from them).
const SEEDS = `${REPO_ROOT}../shared/seeds/`;
const seed = (name: string) => readFileSync(SEEDS + name, 'utf8');

describe('seed notes', () => {
  it.skipIf(!existsSync(SEEDS))('quote the seeds verbatim: the v8 letter on the follow-up, the mail on version 2, the v7 document on version 1', () => {
    expect(seed('stackmap-v8-cover-letter.txt').replace(/\s+/g, ' ')).toContain(V8_FOLLOW_UP.slice(1, -1));
    expect(seed('stackmap-cookie-abi-proposal.txt')).toContain('(ABI version 1 -> 2)');
    expect(seed('ftrace-stackmap-v7-doc.txt')).toContain("Magic: ``0x46534D42`` ('FSMB'), Version: 1.");
  });

  it('version 2 is the proposed follow-up, not v8 as posted; version 1 the v7 document; others no seed', () => {
    expect(binVersionNote('2')).toContain("the cookie ABI mail's proposal");
    expect(binVersionNote('2')).toContain(V8_FOLLOW_UP);
    expect(binVersionNote('2')).toContain('v8 as posted writes no stack_map_bin');
    expect(binVersionNote('1')).toContain("the v7 document's format");
    expect(binVersionNote('7')).toContain('no seed describes it');
    expect(binVersionNote('unknown')).toContain('no version');
    expect(SAMPLE_NOTE).toContain('simulated');
    expect(SAMPLE_NOTE).toContain(V8_FOLLOW_UP);
  });

  it("a stack_map_bin's report carries its header's version, for the Files pane's note", () => {
    const records = [{ slot: 3, refCount: 1, ips: [0xffffffff81000010n] }];
    for (const [version, generation] of [
      [1, null],
      [2, 5],
    ] as const) {
      const bin = writeStackMapBin({ version, generation, littleEndian: true, records, nrStacks: 1 });
      const c = ingestFiles([['stack_map_bin', bin]]);
      expect(c.files[0]).toMatchObject({ kind: 'stack_map_bin', binVersion: String(version) });
    }
  });
});
