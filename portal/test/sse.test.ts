import { test } from "node:test";
import assert from "node:assert/strict";
import { SseParser, follow } from "../src/api/sse.js";

test("events split anywhere come out whole", () => {
  const text = "id: 1\nevent: step.running\ndata: {\"step\":\"a\"}\n\nid: 2\ndata: x\n\n";
  for (let cut = 0; cut < text.length; cut++) {
    const p = new SseParser();
    const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
    assert.deepEqual(events, [
      { id: "1", event: "step.running", data: "{\"step\":\"a\"}" },
      { id: "2", event: "message", data: "x" },
    ]);
    assert.equal(p.lastEventId, "2");
  }
});

test("multi-line data, comments, CRLF and retry", () => {
  const p = new SseParser();
  const events = p.push(": keep-alive\r\nretry: 2500\r\ndata: one\r\ndata:two\r\n\r\n");
  assert.deepEqual(events, [{ id: undefined, event: "message", data: "one\ntwo" }]);
  assert.equal(p.retry, 2500);
});

test("a lone CR at a chunk's end waits for its LF", () => {
  const p = new SseParser();
  assert.deepEqual(p.push("data: a\r"), []);
  assert.deepEqual(p.push("\n\r\n"), [{ id: undefined, event: "message", data: "a" }]);
});

test("follow resumes after a dropped connection with Last-Event-ID", async () => {
  const seen: string[] = [];
  const asked: (string | undefined)[] = [];
  let call = 0;
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const headers = init.headers as Record<string, string>;
    asked.push(headers["Last-Event-ID"]);
    call++;
    const body = call === 1 ? "id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\nda" : "id: 3\ndata: c\n\n";
    let pulls = 0;
    const last = call;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulls++ === 0) c.enqueue(new TextEncoder().encode(body));
        else if (last === 1) c.error(new Error("connection reset"));
        else c.close();
      },
    });
    return new Response(stream, { status: 200 });
  }) as typeof fetch;
  const controller = new AbortController();
  await follow("/v1/runs/x/events", {
    headers: {},
    onEvent: (e) => seen.push(e.data),
    onError: () => {},
    signal: controller.signal,
    fetchImpl,
  });
  assert.deepEqual(seen, ["a", "b", "c"]);
  assert.deepEqual(asked, [undefined, "2"]);
});
