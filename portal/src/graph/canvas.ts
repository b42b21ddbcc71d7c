// Draws a laid-out graph on a 2D canvas: only what is in view (culling),
// boxes with names and icons when zoomed in, plain boxes batched by colour
// when zoomed out (level of detail). Statuses only repaint.

import type { Layout } from "./layout";
import { look } from "../status";

export interface Node {
  name: string;
  /** `map` and `while` nodes are drawn as stacks; exit handlers dashed. */
  kind: string;
}

export interface View {
  /** Layout units → CSS pixels. */
  scale: number;
  /** Translation in CSS pixels. */
  tx: number;
  ty: number;
}

export interface Scene {
  nodes: Node[];
  edges: ReadonlyArray<readonly [number, number]>;
  layout: Layout;
  status: (i: number) => string;
  /** A badge under the name, e.g. "saved 3m" or "7/8 ✓". */
  note: (i: number) => string | null;
  /** Nodes to draw highlighted (search); others dimmed when not empty. */
  highlight: Set<number>;
  selected: number | null;
}

/** Below this many CSS pixels of box width, names are not drawn. */
const DETAIL_PX = 60;

export function fit(l: Layout, width: number, height: number): View {
  const margin = 24;
  const scale = Math.min(
    2,
    (width - 2 * margin) / Math.max(l.width, 1),
    (height - 2 * margin) / Math.max(l.height, 1),
  );
  const s = Math.max(scale, 1e-4);
  return {
    scale: s,
    tx: (width - l.width * s) / 2,
    ty: (height - l.height * s) / 2,
  };
}

/** The node under a point (CSS pixels), if any. */
export function hit(scene: Scene, view: View, px: number, py: number): number | null {
  const { layout: l } = scene;
  const x = (px - view.tx) / view.scale;
  const y = (py - view.ty) / view.scale;
  for (let i = 0; i < scene.nodes.length; i++) {
    if (x >= l.x[i] && x <= l.x[i] + l.nodeWidth && y >= l.y[i] && y <= l.y[i] + l.nodeHeight) return i;
  }
  return null;
}

export function draw(ctx: CanvasRenderingContext2D, scene: Scene, view: View, width: number, height: number) {
  const { layout: l, nodes, edges } = scene;
  const dpr = window.devicePixelRatio || 1;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.translate(view.tx, view.ty);
  ctx.scale(view.scale, view.scale);
  // The visible window in layout units, with a margin.
  const x0 = -view.tx / view.scale - l.nodeWidth;
  const y0 = -view.ty / view.scale - l.nodeHeight;
  const x1 = (width - view.tx) / view.scale + l.nodeWidth;
  const y1 = (height - view.ty) / view.scale + l.nodeHeight;
  const visible = (i: number) => l.x[i] >= x0 && l.x[i] <= x1 && l.y[i] >= y0 && l.y[i] <= y1;
  const dim = scene.highlight.size > 0;

  // Edges: one path, from the bottom of a box to the top of the next.
  ctx.beginPath();
  ctx.lineWidth = 1 / view.scale;
  ctx.strokeStyle = "#9aa4b2";
  const hw = l.nodeWidth / 2;
  for (const [a, b] of edges) {
    if (!visible(a) && !visible(b)) {
      // Both ends out of view: drawn only if the segment may cross it.
      const minY = Math.min(l.y[a], l.y[b]);
      const maxY = Math.max(l.y[a], l.y[b]);
      if (maxY < y0 || minY > y1) continue;
    }
    ctx.moveTo(l.x[a] + hw, l.y[a] + l.nodeHeight);
    ctx.lineTo(l.x[b] + hw, l.y[b]);
  }
  ctx.stroke();

  const detailed = l.nodeWidth * view.scale >= DETAIL_PX;
  // Boxes, batched by fill colour.
  const byFill = new Map<string, number[]>();
  for (let i = 0; i < nodes.length; i++) {
    if (!visible(i)) continue;
    const fill = look(scene.status(i)).fill;
    let list = byFill.get(fill);
    if (!list) byFill.set(fill, (list = []));
    list.push(i);
  }
  for (const [fill, list] of byFill) {
    ctx.fillStyle = fill;
    ctx.beginPath();
    for (const i of list) {
      if (nodes[i].kind === "map" || nodes[i].kind === "while") {
        // A stack: a shadow box behind.
        ctx.rect(l.x[i] + 4, l.y[i] - 4, l.nodeWidth, l.nodeHeight);
      }
      ctx.rect(l.x[i], l.y[i], l.nodeWidth, l.nodeHeight);
    }
    ctx.fill();
  }
  if (dim) {
    ctx.fillStyle = "rgba(255,255,255,0.7)";
    ctx.beginPath();
    for (let i = 0; i < nodes.length; i++) {
      if (visible(i) && !scene.highlight.has(i)) ctx.rect(l.x[i], l.y[i], l.nodeWidth, l.nodeHeight);
    }
    ctx.fill();
  }
  if (scene.selected !== null && visible(scene.selected)) {
    const i = scene.selected;
    ctx.lineWidth = 3 / view.scale;
    ctx.strokeStyle = "#f2b705";
    ctx.strokeRect(l.x[i] - 2, l.y[i] - 2, l.nodeWidth + 4, l.nodeHeight + 4);
  }
  if (!detailed) return;
  // Names, icons and notes.
  ctx.fillStyle = "#ffffff";
  ctx.textBaseline = "middle";
  const px = 13;
  ctx.font = `${px}px system-ui, sans-serif`;
  for (let i = 0; i < nodes.length; i++) {
    if (!visible(i)) continue;
    const node = nodes[i];
    const status = look(scene.status(i));
    const note = scene.note(i);
    const text = `${status.icon} ${node.name}`;
    const cy = l.y[i] + (note ? l.nodeHeight * 0.35 : l.nodeHeight / 2);
    ctx.fillText(clip(ctx, text, l.nodeWidth - 12), l.x[i] + 6, cy);
    if (note) {
      ctx.font = `${px - 2}px system-ui, sans-serif`;
      ctx.fillText(clip(ctx, note, l.nodeWidth - 12), l.x[i] + 6, l.y[i] + l.nodeHeight * 0.72);
      ctx.font = `${px}px system-ui, sans-serif`;
    }
    if (node.kind === "exit") {
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = "#ffffff";
      ctx.lineWidth = 1;
      ctx.strokeRect(l.x[i] + 2, l.y[i] + 2, l.nodeWidth - 4, l.nodeHeight - 4);
      ctx.restore();
    }
  }
}

function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + "…").width <= width) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}
