// Server-Sent Events over fetch: a parser of one response, and the resuming reader of
// `GET /v1/stream` that reconnects after its last event id (Last-Event-ID) on any node.

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  comment?: string;
}

/** Parses one SSE response body; comments are reported too (the stream's first one names its start). */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let at;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const ev: SseEvent = { data: '' };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) {
            ev.comment = line.slice(1).trim();
            continue;
          }
          const colon = line.indexOf(':');
          const k = colon < 0 ? line : line.slice(0, colon);
          const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (k === 'id') ev.id = v;
          else if (k === 'event') ev.event = v;
          else if (k === 'data') data.push(v);
        }
        ev.data = data.join('\n');
        if (ev.data || ev.comment !== undefined) yield ev;
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** A ledger message of the stream (topics/README.md): `{ v, type, market, seq, at, topic, ... }`. */
export interface LedgerEvent {
  /** Stream position `o<orders seq>.t<trades seq>`: resume after it with Last-Event-ID. */
  id: string;
  type: string;
  topic: 'ledger.orders' | 'ledger.trades';
  seq: number;
  market: string;
  message: Record<string, any>;
}
