// A minimal WebSocket server side (RFC 6455): handshake, text frames, ping/pong, close.
// Enough for the JSON-RPC subscriptions @solana/web3.js opens; no extensions.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface WsConnection {
  send(text: string): void;
  close(): void;
  onMessage(handler: (text: string) => void): void;
  onClose(handler: () => void): void;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  let head: Buffer;
  if (len < 126) head = Buffer.from([0x80 | opcode, len]);
  else if (len < 65536) {
    head = Buffer.alloc(4);
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

/** Completes the upgrade of `req` and returns the connection, or null when it is not a WebSocket request. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex): WsConnection | null {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
    socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return null;
  }
  const accept = createHash('sha1')
    .update(key + GUID)
    .digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let messageHandler: (text: string) => void = () => {};
  const closeHandlers: (() => void)[] = [];
  let buffer = Buffer.alloc(0);
  let fragments: Buffer[] = [];
  let closed = false;
  const conn: WsConnection = {
    send(text) {
      if (!closed && socket.writable) socket.write(frame(0x1, Buffer.from(text)));
    },
    close() {
      if (closed) return;
      closed = true;
      // status 1000 (normal closure): clients such as rpc-websockets then do not reconnect
      if (socket.writable) socket.end(frame(0x8, Buffer.from([0x03, 0xe8])));
      else socket.destroy();
    },
    onMessage(h) {
      messageHandler = h;
    },
    onClose(h) {
      closeHandlers.push(h);
    },
  };
  const finish = () => {
    closed = true;
    for (const h of closeHandlers.splice(0)) h();
  };
  socket.on('close', finish);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (buffer.length < 2) return;
      const fin = (buffer[0] & 0x80) !== 0;
      const opcode = buffer[0] & 0x0f;
      const masked = (buffer[1] & 0x80) !== 0;
      let len = buffer[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buffer.length < 4) return;
        len = buffer.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buffer.length < 10) return;
        len = Number(buffer.readBigUInt64BE(2));
        off = 10;
      }
      const maskLen = masked ? 4 : 0;
      if (buffer.length < off + maskLen + len) return;
      const mask = buffer.subarray(off, off + maskLen);
      const payload = Buffer.from(buffer.subarray(off + maskLen, off + maskLen + len));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
      buffer = buffer.subarray(off + maskLen + len);
      if (opcode === 0x8) {
        conn.close();
        return;
      }
      if (opcode === 0x9) {
        if (socket.writable) socket.write(frame(0xa, payload));
        continue;
      }
      if (opcode === 0xa) continue;
      fragments.push(payload);
      if (fin) {
        const text = Buffer.concat(fragments).toString('utf8');
        fragments = [];
        messageHandler(text);
      }
    }
  });
  return conn;
}
