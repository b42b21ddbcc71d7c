import { test } from "node:test";
import assert from "node:assert/strict";
import { layout } from "../src/graph/layout.js";

test("the diamond: a over b and c over d", () => {
  const l = layout({ n: 4, edges: [[0, 1], [0, 2], [1, 3], [2, 3]] });
  assert.deepEqual([...l.layer], [0, 1, 1, 2]);
  assert.ok(l.y[0] < l.y[1] && l.y[1] === l.y[2] && l.y[2] < l.y[3]);
  assert.notEqual(l.x[1], l.x[2]);
  // a and d are centred over the two in the middle.
  assert.equal(l.x[0], l.x[3]);
});

test("the same input gives the same layout", () => {
  const edges = randomDag(2000, 5000, 7);
  const a = layout({ n: 2000, edges });
  const b = layout({ n: 2000, edges });
  assert.deepEqual([...a.x], [...b.x]);
  assert.deepEqual([...a.y], [...b.y]);
});

test("no two nodes of a layer overlap, and edges point down", () => {
  const edges = randomDag(3000, 9000, 11);
  const l = layout({ n: 3000, edges });
  const rows = new Map<number, number[]>();
  for (let v = 0; v < 3000; v++) rows.set(l.y[v], [...(rows.get(l.y[v]) ?? []), l.x[v]]);
  for (const xs of rows.values()) {
    xs.sort((p, q) => p - q);
    for (let i = 1; i < xs.length; i++) assert.ok(xs[i] - xs[i - 1] >= l.nodeWidth, "overlap");
  }
  for (const [a, b] of edges) assert.ok(l.layer[a] < l.layer[b]);
});

test("a cycle does not hang it", () => {
  const l = layout({ n: 3, edges: [[0, 1], [1, 2], [2, 1]] });
  assert.equal(l.layer.length, 3);
});

test("10,000 nodes in well under a second", () => {
  const edges = randomDag(10_000, 20_000, 3);
  const t = performance.now();
  layout({ n: 10_000, edges });
  const ms = performance.now() - t;
  // The budget is 100 ms in a browser; a loaded CI machine gets slack.
  assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms`);
  console.log(`layout of 10,000 nodes / 20,000 edges: ${ms.toFixed(1)} ms`);
});

/** A random DAG: edges always go from a lower to a higher index. */
function randomDag(n: number, m: number, seed: number): [number, number][] {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const out: [number, number][] = [];
  for (let i = 0; i < m; i++) {
    const a = Math.floor(rand() * (n - 1));
    const b = a + 1 + Math.floor(rand() * Math.min(50, n - a - 1));
    out.push([a, b]);
  }
  return out;
}
