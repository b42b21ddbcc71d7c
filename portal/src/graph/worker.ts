// Runs the layout off the main thread: posts back node coordinates as
// transferable arrays.

import { layout, type LayoutInput } from "./layout";

self.onmessage = (e: MessageEvent<LayoutInput & { id: number }>) => {
  const t0 = performance.now();
  const l = layout(e.data);
  const ms = performance.now() - t0;
  (self as unknown as Worker).postMessage({ id: e.data.id, layout: l, ms }, [l.x.buffer, l.y.buffer, l.layer.buffer]);
};
