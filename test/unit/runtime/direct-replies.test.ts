// The direct-replies wire (src/runtime/direct-replies.ts) on real sockets: a valid hello is
// accepted and its frames reach the receiver in order; a wrong MAC, an unknown topic, garbage, an
// oversized frame or silence closes that connection only, and the server goes on serving others.
// The worker's side writes only once its connection is up, and gives up when the server goes.
import test from 'ava';
import net from 'node:net';
import { createHmac } from 'node:crypto';
import { DirectLinks, MAX_FRAME_BYTES, ReplyServer } from '../../../src/runtime/direct-replies.ts';

const SECRET = 'unit-secret';
const frame = (text: string) => {
  const b = Buffer.from(text);
  const h = Buffer.alloc(4);
  h.writeUInt32BE(b.length);
  return Buffer.concat([h, b]);
};
const hello = (topic: string, secret = SECRET) =>
  frame(JSON.stringify({ v: 1, topic, mac: createHmac('sha256', secret).update(topic).digest('hex') }));

/** Connects, writes `data`, and resolves with what came back once the server closed (or after `ms`). */
function exchange(port: number, data: Buffer[], ms = 1500): Promise<{ got: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    let closed = false;
    s.on('data', (b) => got.push(b));
    s.on('error', () => undefined);
    s.on('close', () => {
      closed = true;
      resolve({ got: Buffer.concat(got), closed });
    });
    s.on('connect', () => {
      for (const d of data) s.write(d);
    });
    setTimeout(() => {
      s.destroy();
      resolve({ got: Buffer.concat(got), closed });
    }, ms);
  });
}

async function server(t: any) {
  const got: string[] = [];
  const srv = new ReplyServer({ secret: SECRET }, (topic) => (topic === 'replies.n1' ? (v) => got.push(v) : undefined));
  const via = await srv.start();
  t.teardown(() => srv.stop());
  return { srv, via, port: Number(via.split(':')[1]), got };
}

test('a valid hello is accepted and its frames arrive in order; bad hellos and frames close only their connection', async (t) => {
  const { port, got } = await server(t);
  const ok = await exchange(port, [hello('replies.n1'), frame('{"corr":"a"}'), frame('{"corr":"b"}')], 500);
  t.deepEqual([...ok.got], [1]);
  t.deepEqual(got, ['{"corr":"a"}', '{"corr":"b"}']);

  const wrongMac = await exchange(port, [hello('replies.n1', 'not-the-secret'), frame('{"corr":"x"}')]);
  t.deepEqual([...wrongMac.got], [0]);
  t.true(wrongMac.closed);
  const otherTopic = await exchange(port, [hello('replies.n2'), frame('{"corr":"y"}')]);
  t.deepEqual([...otherTopic.got], [0]);
  const garbage = await exchange(port, [frame('not json at all')]);
  t.deepEqual([...garbage.got], [0]);
  const hugeHello = await exchange(port, [Buffer.from([0xff, 0xff, 0xff, 0xff])]);
  t.true(hugeHello.closed);
  t.is(hugeHello.got.length, 0);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(MAX_FRAME_BYTES + 1);
  const huge = await exchange(port, [hello('replies.n1'), head]);
  t.deepEqual([...huge.got], [1]);
  t.true(huge.closed, 'an oversized frame closes the connection');
  t.deepEqual(got, ['{"corr":"a"}', '{"corr":"b"}'], 'nothing of a refused connection was received');

  // Still serving.
  await exchange(port, [hello('replies.n1'), frame('{"corr":"c"}')], 300);
  t.deepEqual(got.at(-1), '{"corr":"c"}');
});

test('a silent connection is closed after the hello timeout', async (t) => {
  const { port } = await server(t);
  const silent = await exchange(port, [], 7000);
  t.true(silent.closed);
});

test('the worker side writes once its connection is up, and falls back when the server is gone', async (t) => {
  const { srv, via, got } = await server(t);
  const links = new DirectLinks(SECRET);
  t.teardown(() => links.close());
  t.false(links.trySend(via, 'replies.n1', ['{"corr":"first"}']), 'not up yet: the caller uses the reply topic');
  const deadline = Date.now() + 5000;
  while (!links.trySend(via, 'replies.n1', ['{"corr":"1"}', '{"corr":"2"}']) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  while (got.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.deepEqual(got, ['{"corr":"1"}', '{"corr":"2"}']);
  // Refused (another topic): never up.
  t.false(links.trySend(via, 'replies.n2', ['{}']));
  await new Promise((r) => setTimeout(r, 300));
  t.false(links.trySend(via, 'replies.n2', ['{}']));
  // The server stops: the link goes down and stays down (through the reply topic) until retried.
  await srv.stop();
  await new Promise((r) => setTimeout(r, 300));
  t.false(links.trySend(via, 'replies.n1', ['{"corr":"3"}']));
  t.false(links.trySend('127.0.0.1:notaport', 'replies.n1', ['{}']));
});
