// A stand-in for the node's `market` WebSocket channel (docs/ws.md), for testing a client of it
// (the market page) before or without the server side: a proxy in front of a node that passes
// every HTTP request through and answers upgrades of /ws/market itself, speaking RFC 6455 text
// frames by hand (no compression), so that a test decides exactly which messages, gaps and
// disconnects the client sees, and records what the client sent.
import { createHash } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export class WsConn {
  /** Text frames the client sent, in order. */
  readonly received: string[] = [];
  closed = false;
  private buf = Buffer.alloc(0);

  constructor(private socket: Duplex) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {
      this.closed = true;
    });
  }

  send(message: unknown) {
    this.frame(0x1, Buffer.from(typeof message === 'string' ? message : JSON.stringify(message)));
  }

  /** Drops the TCP connection without a close frame (the client sees 1006). */
  drop() {
    this.socket.destroy();
  }

  private frame(opcode: number, payload: Buffer) {
    if (this.closed) return;
    const n = payload.length;
    const head =
      n < 126
        ? Buffer.from([0x80 | opcode, n])
        : n < 65536
          ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 255])
          : (() => {
              const h = Buffer.alloc(10);
              h[0] = 0x80 | opcode;
              h[1] = 127;
              h.writeBigUInt64BE(BigInt(n), 2);
              return h;
            })();
    this.socket.write(Buffer.concat([head, payload]));
  }

  private parse() {
    for (;;) {
      if (this.buf.length < 2) return;
      const opcode = this.buf[0] & 0x0f;
      let len = this.buf[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        at = 10;
      }
      const masked = (this.buf[1] & 0x80) !== 0;
      const mask = masked ? this.buf.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (this.buf.length < at + len) return;
      const data = Buffer.from(this.buf.subarray(at, at + len));
      if (mask) for (let i = 0; i < data.length; i++) data[i] ^= mask[i & 3];
      this.buf = this.buf.subarray(at + len);
      if (opcode === 0x1) this.received.push(data.toString('utf8'));
      else if (opcode === 0x8) {
        this.frame(0x8, data.subarray(0, 2));
        this.socket.end();
        this.closed = true;
        return;
      } else if (opcode === 0x9) this.frame(0xa, data);
    }
  }
}

export interface ChannelStandIn {
  /** The proxy's base URL: open the page through it. */
  url: string;
  /** Every connection accepted, oldest first. */
  conns: WsConn[];
  /** While true, upgrades are refused (the socket is destroyed). */
  refuse: boolean;
  close(): Promise<void>;
}

export async function channelStandIn(nodePort: number): Promise<ChannelStandIn> {
  const state: ChannelStandIn = { url: '', conns: [], refuse: false, close: async () => {} };
  const server = http.createServer((req, res) => {
    const p = http.request({ host: '127.0.0.1', port: nodePort, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    p.on('error', () => res.destroy());
    req.pipe(p);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const key = req.headers['sec-websocket-key'];
    if (state.refuse || req.url !== '/ws/market' || typeof key !== 'string') {
      socket.destroy();
      return;
    }
    const accept = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    state.conns.push(new WsConn(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const c of state.conns) c.drop();
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  };
  return state;
}
