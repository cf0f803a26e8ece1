// A small Server-Sent Events reader over fetch (tests and the example consumer).
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export async function* sse(url: string, headers: Record<string, string>, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  const r = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal });
  if (r.status !== 200 || !r.body) throw new Error(`stream answered ${r.status}: ${await r.text()}`);
  const decoder = new TextDecoder();
  let buf = '';
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      let chunk: Uint8Array | undefined;
      try {
        const x = await reader.read();
        if (x.done) return;
        chunk = x.value;
      } catch {
        return; // closed or aborted: the stream simply ends
      }
      buf += decoder.decode(chunk, { stream: true });
      let at;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const ev: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [k, ...rest] = line.split(':');
          const v = rest.join(':').replace(/^ /, '');
          if (k === 'id') ev.id = v;
          else if (k === 'event') ev.event = v;
          else if (k === 'data') ev.data += v;
        }
        if (ev.data) yield ev;
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
