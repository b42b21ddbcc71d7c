// Server-sent events over `fetch`, so the request can carry the
// `Authorization` header (EventSource cannot; Argo's UI keeps its token in
// a JS-readable cookie for that reason, which we do not).

/** One dispatched event. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * The `text/event-stream` grammar, fed in chunks that may split lines
 * anywhere (WHATWG HTML, "Interpreting an event stream").
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | undefined;
  /** The id of the last dispatched event: what `Last-Event-ID` sends (an
   * event cut off by a dropped connection is asked for again). */
  lastEventId: string | undefined;
  /** The reconnection delay the server asked for, in ms. */
  retry: number | undefined;

  /** Forgets a half-received event (the connection dropped). */
  reset() {
    this.buffer = "";
    this.data = [];
    this.event = "";
    this.id = this.lastEventId;
  }

  /** Parses `chunk`; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A lone CR at the end may be the first half of CRLF: wait for more.
      if (m[0] === "\r" && m.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line, out);
    }
    return out;
  }

  private line(line: string, out: SseEvent[]) {
    if (line === "") {
      this.lastEventId = this.id;
      if (this.data.length > 0) {
        out.push({ id: this.id, event: this.event || "message", data: this.data.join("\n") });
      }
      this.data = [];
      this.event = "";
      return;
    }
    if (line.startsWith(":")) return; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
  }
}

export interface StreamOptions {
  headers: Record<string, string>;
  /** Resume after this event id. */
  lastEventId?: string;
  onEvent: (e: SseEvent) => void;
  /** Called when the server ends the stream (the run finished). */
  onEnd?: () => void;
  /** Called for each failure before the next try. */
  onError?: (e: unknown, retryInMs: number) => void;
  signal: AbortSignal;
  fetchImpl?: typeof fetch;
}

/**
 * Follows an event stream until the server ends it or `signal` aborts,
 * reconnecting with `Last-Event-ID` after a dropped connection (1 s,
 * doubling to 30 s, or what the server's `retry:` says).
 */
export async function follow(url: string, o: StreamOptions): Promise<void> {
  const parser = new SseParser();
  parser.lastEventId = o.lastEventId;
  parser.reset();
  let backoff = 1000;
  const doFetch = o.fetchImpl ?? fetch;
  while (!o.signal.aborted) {
    try {
      const headers: Record<string, string> = { ...o.headers, Accept: "text/event-stream" };
      if (parser.lastEventId !== undefined) headers["Last-Event-ID"] = parser.lastEventId;
      const response = await doFetch(url, { headers, signal: o.signal });
      if (!response.ok || !response.body) {
        // 4xx will not get better by asking again.
        if (response.status >= 400 && response.status < 500) {
          throw Object.assign(new Error(`the event stream answered ${response.status}`), { fatal: true });
        }
        throw new Error(`the event stream answered ${response.status}`);
      }
      backoff = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          o.onEnd?.();
          return;
        }
        for (const e of parser.push(value)) o.onEvent(e);
      }
    } catch (e) {
      if (o.signal.aborted) return;
      if ((e as { fatal?: boolean }).fatal) throw e;
      parser.reset();
      const wait = parser.retry ?? backoff;
      o.onError?.(e, wait);
      await new Promise((r) => setTimeout(r, wait));
      backoff = Math.min(backoff * 2, 30_000);
    }
  }
}
