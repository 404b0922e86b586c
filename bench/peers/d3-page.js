// The minimal page a user of d3-flame-graph writes: a folded file from a file input, turned into
// the nested {name, value, children} tree the library takes, rendered with its defaults (width
// set to the page's, transitions off so the final frame is what is timed). window.__peer reports
// to bench/peers.ts: t0 (the input's change event), tDrawn (the rects are in the DOM and a
// frame has been painted), rects, total weight and leaves as d3.hierarchy counts them.
/* global d3, flamegraph */
window.__peer = { t0: 0, tDrawn: 0, rects: 0, total: 0, leaves: 0, error: null };

/** folded text (`a;b;c 12` per line) to the library's nested tree, children merged by name */
function parseFolded(text) {
  const root = { name: 'root', value: 0, children: [] };
  const index = new Map(); // node -> Map(name -> child)
  index.set(root, new Map());
  let at = 0;
  while (at < text.length) {
    let nl = text.indexOf('\n', at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl).trim();
    at = nl + 1;
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    const n = Number(line.slice(sp + 1));
    if (sp < 0 || !Number.isFinite(n)) throw new Error('not a folded line: ' + line.slice(0, 80));
    let node = root;
    for (const name of line.slice(0, sp).split(';')) {
      const kids = index.get(node);
      let c = kids.get(name);
      if (!c) {
        c = { name, value: 0, children: [] };
        kids.set(name, c);
        index.set(c, new Map());
        node.children.push(c);
      }
      node = c;
    }
    node.value += n; // self weight; the library sums children into the parent's value
  }
  return root;
}

document.getElementById('file').addEventListener('change', async (e) => {
  const p = window.__peer;
  p.t0 = performance.now();
  try {
    const text = await e.target.files[0].text();
    const root = parseFolded(text);
    const chart = flamegraph
      .default()
      .width(document.documentElement.clientWidth - 20)
      .transitionDuration(0);
    d3.select('#chart').datum(root).call(chart);
    const h = d3.hierarchy(root).sum((d) => d.value);
    p.total = h.value;
    p.leaves = h.leaves().length;
    const poll = () => {
      const rects = document.querySelectorAll('#chart svg rect').length;
      if (rects > 0) {
        // one more frame: the rects are in the DOM, and this frame paints them
        requestAnimationFrame(() => {
          p.rects = rects;
          p.tDrawn = performance.now();
        });
      } else requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  } catch (err) {
    p.error = String(err && err.stack ? err.stack : err);
  }
});
