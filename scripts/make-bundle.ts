// Writes a .tar.gz of the given files, each stored under its base name, for end-to-end tests:
//   npx tsx scripts/make-bundle.ts OUT.tar.gz FILES...
// Streams throughout (modern-tar's packer, then CompressionStream), so big traces are fine.
import { createWriteStream, openAsBlob, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Writable } from 'node:stream';
import { createTarPacker } from 'modern-tar';

const [out, ...inputs] = process.argv.slice(2);
if (!out || inputs.length === 0) {
  console.error('usage: npx tsx scripts/make-bundle.ts OUT.tar.gz FILES...');
  process.exit(2);
}

const { readable, controller } = createTarPacker();
const written = readable
  .pipeThrough(new CompressionStream('gzip') as ReadableWritablePair<Uint8Array, Uint8Array>)
  .pipeTo(Writable.toWeb(createWriteStream(out)) as WritableStream<Uint8Array>);
for (const path of inputs) {
  const st = statSync(path);
  const body = (await openAsBlob(path)).stream();
  await body.pipeTo(controller.add({ name: basename(path), size: st.size, type: 'file', mtime: st.mtime, mode: 0o644 }));
}
controller.finalize();
await written;
console.log(`wrote ${out}: ${inputs.map((p) => basename(p)).join(', ')}`);
