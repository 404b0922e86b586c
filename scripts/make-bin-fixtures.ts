/**
 * Writes the stack_map_bin fixtures under src/core/formats/fixtures/stack_map_bin/ with the
 * project's writer. Run: npx tsx scripts/make-bin-fixtures.ts
 * The tests (stack-map-bin.test.ts) state the same records and check the files against them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeStackMapBin, type BinRecordInput } from '../src/core/formats/stack-map-write.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../src/core/formats/fixtures/stack_map_bin');

function put(rel: string, bytes: Uint8Array): void {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  console.log(`${rel}: ${bytes.length} bytes`);
}

// the same records as in stack-map-bin.test.ts (kept in both on purpose: the test checks the files)
const records: BinRecordInput[] = [
  { slot: 0, refCount: 1337, ips: [0xffffffff81234567n, 0xffffffff81000010n, 0xffffffff810abcden] },
  { slot: 1, refCount: 12, ips: [0x7fffffffn, 0xffffffffc0a1b2c3n] },
  { slot: 7, refCount: 1, ips: [0xffffffff81111111n, 0xffffffff82222222n, 0xffffffff83333333n, 0xffffffff84444444n] },
];

put('v1/le.bin', writeStackMapBin({ version: 1, generation: null, littleEndian: true, records }));
put('v1/be.bin', writeStackMapBin({ version: 1, generation: null, littleEndian: false, records }));
put('v2/le.bin', writeStackMapBin({ version: 2, generation: 3, littleEndian: true, records }));
put('v3/unknown-version.bin', writeStackMapBin({ version: 3, generation: 5, littleEndian: true, records }));
// the last record cut after its header and one of its ips
const whole = writeStackMapBin({ version: 1, generation: null, littleEndian: true, records });
put('v1/truncated.bin', whole.subarray(0, whole.length - 8 * (records[2].ips.length - 1)));
