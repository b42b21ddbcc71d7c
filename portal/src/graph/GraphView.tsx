import { useEffect, useRef, useState } from "preact/hooks";
import type { Layout } from "./layout";
import { draw, fit, hit, type Node, type Scene, type View } from "./canvas";

export interface GraphProps {
  nodes: Node[];
  edges: [number, number][];
  /** Changes when the graph's shape does (the IR hash): a new layout. */
  shapeKey: string;
  status: (i: number) => string;
  note: (i: number) => string | null;
  /** Bumped when statuses change: a repaint, no new layout. */
  version: number;
  selected: number | null;
  onSelect: (i: number | null) => void;
  highlight: Set<number>;
  /** A sentence for screen readers ("412 steps: 300 succeeded, …"). */
  summary: string;
}

let nextId = 0;

/** The DAG on a canvas, laid out in a worker; pan by dragging, zoom by wheel. */
export function GraphView(p: GraphProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const [l, setLayout] = useState<Layout | null>(null);
  const view = useRef<View | null>(null);
  const size = useRef({ w: 800, h: 480 });
  const frame = useRef(0);
  const props = useRef(p);
  props.current = p;

  // Lay out in a worker whenever the shape changes.
  useEffect(() => {
    const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    const id = ++nextId;
    performance.mark("graph-layout-start");
    worker.onmessage = (e) => {
      if (e.data.id !== id) return;
      performance.measure("graph-layout", "graph-layout-start");
      view.current = null;
      setLayout(e.data.layout);
      worker.terminate();
    };
    worker.postMessage({ id, n: p.nodes.length, edges: p.edges });
    return () => worker.terminate();
  }, [p.shapeKey]);

  const paint = () => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      const c = canvas.current;
      if (!c || !l) return;
      const ctx = c.getContext("2d");
      if (!ctx) return;
      const { w, h } = size.current;
      if (!view.current) view.current = fit(l, w, h);
      const q = props.current;
      const scene: Scene = {
        nodes: q.nodes,
        edges: q.edges,
        layout: l,
        status: q.status,
        note: q.note,
        highlight: q.highlight,
        selected: q.selected,
      };
      draw(ctx, scene, view.current, w, h);
      if (!performance.getEntriesByName("graph-painted").length) {
        performance.mark("graph-painted");
      }
      c.dataset.painted = String(Number(c.dataset.painted ?? 0) + 1);
    });
  };

  // Size the canvas to its box (and the device's pixel ratio).
  useEffect(() => {
    const el = box.current;
    const c = canvas.current;
    if (!el || !c) return;
    const resize = () => {
      const r = el.getBoundingClientRect();
      const dpr = window.devicePixelRatio || 1;
      size.current = { w: r.width, h: r.height };
      c.width = Math.round(r.width * dpr);
      c.height = Math.round(r.height * dpr);
      paint();
    };
    const observer = new ResizeObserver(resize);
    observer.observe(el);
    resize();
    return () => observer.disconnect();
  }, [l]);

  useEffect(paint, [l, p.version, p.selected, p.highlight]);

  const zoom = (factor: number, cx = size.current.w / 2, cy = size.current.h / 2) => {
    const v = view.current;
    if (!v) return;
    const scale = Math.min(4, Math.max(1e-4, v.scale * factor));
    const k = scale / v.scale;
    view.current = { scale, tx: cx - (cx - v.tx) * k, ty: cy - (cy - v.ty) * k };
    paint();
  };
  const pan = (dx: number, dy: number) => {
    const v = view.current;
    if (!v) return;
    view.current = { ...v, tx: v.tx + dx, ty: v.ty + dy };
    paint();
  };
  const fitAll = () => {
    view.current = null;
    paint();
  };
  /** The canvas's width left of the step drawer, which lies over it. */
  const visibleWidth = () => {
    const { w } = size.current;
    const at = canvas.current?.getBoundingClientRect();
    const drawer = document.querySelector(".drawer")?.getBoundingClientRect();
    if (!at || !drawer || drawer.left >= at.right) return w;
    return Math.max(drawer.left - at.left, w / 4);
  };
  /** Centres node `i` at a readable zoom, in the part the drawer leaves. */
  const focus = (i: number) => {
    if (!l) return;
    const scale = Math.max(view.current?.scale ?? 1, 1);
    const { h } = size.current;
    const w = visibleWidth();
    view.current = {
      scale,
      tx: w / 2 - (l.x[i] + l.nodeWidth / 2) * scale,
      ty: h / 2 - (l.y[i] + l.nodeHeight / 2) * scale,
    };
    paint();
  };
  useEffect(() => {
    if (p.selected !== null && l) {
      if (!view.current) view.current = fit(l, size.current.w, size.current.h);
      const v = view.current;
      const { h } = size.current;
      const w = visibleWidth();
      const x = l.x[p.selected] * v.scale + v.tx;
      const y = l.y[p.selected] * v.scale + v.ty;
      const right = x + l.nodeWidth * v.scale;
      if (x < 0 || y < 0 || right > w || y > h || v.scale < 0.5) focus(p.selected);
    }
  }, [p.selected, l]);

  const drag = useRef<{ x: number; y: number; moved: boolean } | null>(null);
  return (
    <div class="graph">
      <div class="graph-tools" role="toolbar" aria-label="Graph view">
        <button type="button" onClick={() => zoom(1.25)} aria-label="Zoom in">
          +
        </button>
        <button type="button" onClick={() => zoom(0.8)} aria-label="Zoom out">
          −
        </button>
        <button type="button" onClick={fitAll}>
          Fit
        </button>
        <button type="button" onClick={() => zoom(1 / (view.current?.scale ?? 1))}>
          100%
        </button>
      </div>
      <div class="graph-box" ref={box}>
        <canvas
          ref={canvas}
          role="img"
          aria-label={p.summary}
          tabIndex={0}
          onKeyDown={(e) => {
            const step = 60;
            const keys: Record<string, () => void> = {
              ArrowLeft: () => pan(step, 0),
              ArrowRight: () => pan(-step, 0),
              ArrowUp: () => pan(0, step),
              ArrowDown: () => pan(0, -step),
              "+": () => zoom(1.25),
              "=": () => zoom(1.25),
              "-": () => zoom(0.8),
              "0": fitAll,
            };
            const f = keys[e.key];
            if (f) {
              e.preventDefault();
              f();
            }
          }}
          onWheel={(e) => {
            e.preventDefault();
            const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
            zoom(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
          }}
          onPointerDown={(e) => {
            drag.current = { x: e.clientX, y: e.clientY, moved: false };
            (e.currentTarget as HTMLCanvasElement).setPointerCapture(e.pointerId);
          }}
          onPointerMove={(e) => {
            const d = drag.current;
            if (!d) return;
            const dx = e.clientX - d.x;
            const dy = e.clientY - d.y;
            if (Math.abs(dx) + Math.abs(dy) > 2) d.moved = true;
            d.x = e.clientX;
            d.y = e.clientY;
            if (d.moved) pan(dx, dy);
          }}
          onPointerUp={(e) => {
            const d = drag.current;
            drag.current = null;
            if (d && !d.moved && l && view.current) {
              const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
              const scene = { nodes: p.nodes, layout: l } as Scene;
              p.onSelect(hit(scene, view.current, e.clientX - r.left, e.clientY - r.top));
            }
          }}
        />
        {!l && <p class="graph-wait">Laying out {p.nodes.length.toLocaleString()} steps…</p>}
      </div>
    </div>
  );
}
