// A layered (Sugiyama-style) layout for DAGs of up to tens of thousands of
// steps, fast enough to run on every new graph: longest-path layers, a few
// barycentre sweeps to reduce crossings, then each layer centred. It runs
// in a Web Worker (worker.ts); this module is pure so tests can run it.

export interface LayoutInput {
  /** How many nodes; nodes are 0..n-1. */
  n: number;
  /** Edges as [from, to] node indices (from runs before to). */
  edges: ReadonlyArray<readonly [number, number]>;
  /** Box size and gaps, in layout units. */
  nodeWidth?: number;
  nodeHeight?: number;
  gapX?: number;
  gapY?: number;
  /** Barycentre sweeps (down then up counts as two). */
  sweeps?: number;
}

export interface Layout {
  /** Top-left corner of each node. */
  x: Float64Array;
  y: Float64Array;
  layer: Int32Array;
  width: number;
  height: number;
  nodeWidth: number;
  nodeHeight: number;
}

/** Lays out the graph; nodes in a cycle (never in valid IR) go to layer 0. */
export function layout(input: LayoutInput): Layout {
  const { n, edges } = input;
  const nodeWidth = input.nodeWidth ?? 180;
  const nodeHeight = input.nodeHeight ?? 44;
  const gapX = input.gapX ?? 24;
  const gapY = input.gapY ?? 56;
  const sweeps = input.sweeps ?? 4;

  // Adjacency in compressed form: outgoing and incoming, by node.
  const outStart = new Int32Array(n + 1);
  const inStart = new Int32Array(n + 1);
  for (const [a, b] of edges) {
    if (a < 0 || b < 0 || a >= n || b >= n || a === b) continue;
    outStart[a + 1]++;
    inStart[b + 1]++;
  }
  for (let i = 0; i < n; i++) {
    outStart[i + 1] += outStart[i];
    inStart[i + 1] += inStart[i];
  }
  const outs = new Int32Array(outStart[n]);
  const ins = new Int32Array(inStart[n]);
  const oFill = outStart.slice(0, n);
  const iFill = inStart.slice(0, n);
  for (const [a, b] of edges) {
    if (a < 0 || b < 0 || a >= n || b >= n || a === b) continue;
    outs[oFill[a]++] = b;
    ins[iFill[b]++] = a;
  }

  // Longest-path layering in topological (Kahn) order.
  const layer = new Int32Array(n);
  const indegree = new Int32Array(n);
  for (let i = 0; i < n; i++) indegree[i] = inStart[i + 1] - inStart[i];
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue[tail++] = i;
  while (head < tail) {
    const v = queue[head++];
    for (let k = outStart[v]; k < outStart[v + 1]; k++) {
      const w = outs[k];
      if (layer[v] + 1 > layer[w]) layer[w] = layer[v] + 1;
      if (--indegree[w] === 0) queue[tail++] = w;
    }
  }
  let layers = 0;
  for (let i = 0; i < n; i++) if (layer[i] + 1 > layers) layers = layer[i] + 1;

  // Initial order within each layer: by index (stable, deterministic).
  const byLayer: number[][] = Array.from({ length: layers }, () => []);
  for (let i = 0; i < n; i++) byLayer[layer[i]].push(i);
  const pos = new Float64Array(n);
  const place = (row: number[]) => row.forEach((v, i) => (pos[v] = i));
  byLayer.forEach(place);

  // Barycentre sweeps: order each layer by the mean position of its
  // neighbours in the layer before (down) or after (up).
  const key = new Float64Array(n);
  for (let s = 0; s < sweeps; s++) {
    const down = s % 2 === 0;
    const range = down ? [...Array(layers).keys()].slice(1) : [...Array(layers).keys()].reverse().slice(1);
    for (const l of range) {
      const row = byLayer[l];
      for (const v of row) {
        let sum = 0;
        let count = 0;
        const [start, end, list] = down ? [inStart[v], inStart[v + 1], ins] : [outStart[v], outStart[v + 1], outs];
        for (let k = start; k < end; k++) {
          const u = list[k];
          if (layer[u] === (down ? l - 1 : l + 1)) {
            sum += pos[u];
            count++;
          }
        }
        key[v] = count > 0 ? sum / count : pos[v];
      }
      row.sort((a, b) => key[a] - key[b] || a - b);
      place(row);
    }
  }

  // Coordinates: layers top to bottom, each centred on the widest.
  let widest = 0;
  for (const row of byLayer) if (row.length > widest) widest = row.length;
  const step = nodeWidth + gapX;
  const width = Math.max(0, widest * step - gapX);
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  byLayer.forEach((row, l) => {
    const offset = (width - (row.length * step - gapX)) / 2;
    row.forEach((v, i) => {
      x[v] = offset + i * step;
      y[v] = l * (nodeHeight + gapY);
    });
  });
  const height = Math.max(0, layers * (nodeHeight + gapY) - gapY);
  return { x, y, layer, width, height, nodeWidth, nodeHeight };
}
