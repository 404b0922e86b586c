// The browser's baseline for reading a big trace (bench/big-trace-browser.ts): the picked files'
// bytes streamed (File.stream()) and every '\n' counted, in the page's main thread, nothing kept.
// window.__read reports t0 (the change event), ms, bytes and newlines.
window.__read = { t0: 0, ms: 0, bytes: 0, newlines: 0, error: null };
document.getElementById('file').addEventListener('change', async (e) => {
  const r = window.__read;
  r.t0 = performance.now();
  try {
    for (const f of e.target.files) {
      const reader = f.stream().getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        r.bytes += value.length;
        let n = 0;
        for (let i = 0; i < value.length; i++) if (value[i] === 10) n++;
        r.newlines += n;
      }
    }
    r.ms = performance.now() - r.t0;
  } catch (err) {
    r.error = String(err);
  }
});
