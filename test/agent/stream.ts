/** Reads `GET /agent/stream` (Server-Sent Events) in a test: every event as it arrives. */

/** One server-sent event. */
export interface StreamEvent {
  readonly event: string;
  readonly data: any;
}

/** An open stream: the events so far, the comment lines, and a way to close it. */
export interface OpenStream {
  readonly events: StreamEvent[];
  readonly comments: string[];
  readonly headers: Headers;
  readonly status: number;
  /** True once the server ended the stream (or the test closed it). */
  ended(): boolean;
  close(): void;
}

/** Opens the stream with `headers` (a bearer token or a session cookie). */
export async function openStream(server: { readonly url: string }, headers: Record<string, string>): Promise<OpenStream> {
  const stop = new AbortController();
  const res = await fetch(`${server.url}/agent/stream`, { headers, signal: stop.signal });
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  if (res.ok && res.body) {
    void pump(res.body, events, comments)
      .catch(() => undefined)
      .finally(() => {
        ended = true;
      });
  } else await res.body?.cancel();
  return { events, comments, headers: res.headers, status: res.status, ended: () => ended, close: () => stop.abort() };
}

async function pump(body: ReadableStream<Uint8Array>, events: StreamEvent[], comments: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) });
      end = buffer.indexOf('\n\n');
    }
  }
}
