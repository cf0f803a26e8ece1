// Account-change subscriptions on the local chain's WebSocket (src/chain/account-subscriptions.ts,
// through the gateway's watchHolding): changes made on the chain reach every watcher of the
// account at their slot, one server subscription per account, the last stop unsubscribes, and a
// dropped connection subscribes every watched account again; one that goes silent is dropped at
// the next ping.
import test from 'ava';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { createTransferInstruction } from '@solana/spl-token';
import { startLocalChain } from '../../../src/chain/local/index.ts';
import { Web3Gateway, type TokenHolding } from '../../../src/chain/gateway.ts';
import { AccountSubscriptions, websocketUrlOf } from '../../../src/chain/account-subscriptions.ts';

const U = 1_000_000n;

async function until(f: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function world(t: { teardown(f: () => Promise<void> | void): void }) {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const boot = await chain.bootstrap();
  const mint = boot.collateralMint.toBase58();
  const alice = Keypair.generate();
  const bob = Keypair.generate();
  const aliceAta = await chain.fundWallet(alice.publicKey, BigInt(LAMPORTS_PER_SOL), 1_000n * U);
  const bobAta = await chain.fundWallet(bob.publicKey, BigInt(LAMPORTS_PER_SOL), 0n);
  const send = (amount: bigint) => {
    const r = chain.dev.send([createTransferInstruction(aliceAta, bobAta, alice.publicKey, amount)], [alice]);
    if (!r.landed || r.err) throw new Error(`transfer failed: ${JSON.stringify(r.err)}`);
    return r;
  };
  return { chain, mint, alice, bob, send };
}

test('the WebSocket endpoint of an RPC URL is derived as web3.js does', (t) => {
  t.is(websocketUrlOf('http://127.0.0.1:8899'), 'ws://127.0.0.1:8900/');
  t.is(websocketUrlOf('https://rpc.example.com/key'), 'wss://rpc.example.com/key');
  t.is(websocketUrlOf('http://[::1]:7000/x?y=1'), 'ws://[::1]:7001/x?y=1');
});

test('watchers of one account share one subscription, see each change at its slot, and the last stop unsubscribes', async (t) => {
  const { chain, mint, alice, send } = await world(t);
  const gw = new Web3Gateway(chain.url, null);
  const a: TokenHolding[] = [];
  const b: TokenHolding[] = [];
  const stopA = gw.watchHolding(alice.publicKey.toBase58(), mint, (h) => a.push(h));
  const stopB = gw.watchHolding(alice.publicKey.toBase58(), mint, (h) => b.push(h));
  await until(() => chain.subscriptions('account') === 1, 'one subscription for both watchers');

  const r = send(100n * U);
  await until(() => a.length === 1 && b.length === 1, 'both watchers told');
  t.is(a[0].amount, 900n * U);
  t.deepEqual(a[0], b[0]);
  t.true(a[0].slot >= Number(r.slot), `notified at slot ${a[0].slot}, landed at ${r.slot}`);

  await stopA();
  send(50n * U);
  await until(() => b.length === 2, 'the remaining watcher told');
  t.is(b[1].amount, 850n * U);
  t.is(a.length, 1, 'a stopped watcher hears nothing more');
  t.is(chain.subscriptions('account'), 1);

  await stopB();
  await until(() => chain.subscriptions('account') === 0, 'the subscription ended with its last watcher');
});

test('a dropped connection subscribes every watched account again, including one watched while it was down', async (t) => {
  const { chain, mint, alice, send } = await world(t);
  const gw = new Web3Gateway(chain.url, null);
  const seen: TokenHolding[] = [];
  const stops = [gw.watchHolding(alice.publicKey.toBase58(), mint, (h) => seen.push(h))];
  // Many other accounts (wallets with no token account yet): each its own subscription.
  const others = Array.from({ length: 300 }, () => Keypair.generate().publicKey.toBase58());
  for (const o of others.slice(0, 299)) stops.push(gw.watchHolding(o, mint, () => undefined));
  await until(() => chain.subscriptions('account') === 300, '300 subscriptions');

  chain.dropWebSockets();
  await until(() => chain.subscriptions('account') === 0, 'the chain to forget the dropped connection');
  stops.push(gw.watchHolding(others[299], mint, () => undefined));
  await until(() => chain.subscriptions('account') === 301, 'every account subscribed again on a new connection');

  send(1n * U);
  await until(() => seen.length === 1, 'a change told through the new connection');
  t.is(seen[0].amount, 999n * U);
  t.is(seen[0].account, (await gw.holding(alice.publicKey.toBase58(), mint)).account);

  await Promise.all(stops.map((s) => s()));
  await until(() => chain.subscriptions('account') === 0, 'every subscription ended');
  t.pass();
});

test('a token account created after the watch began is told with its balance', async (t) => {
  const { chain, mint } = await world(t);
  const gw = new Web3Gateway(chain.url, null);
  const carol = Keypair.generate();
  const seen: TokenHolding[] = [];
  const stop = gw.watchHolding(carol.publicKey.toBase58(), mint, (h) => seen.push(h));
  t.teardown(() => stop());
  await until(() => chain.subscriptions('account') === 1, 'the subscription');
  // Carol's token account comes into being: the watcher sees it (with its balance).
  await chain.fundWallet(carol.publicKey, BigInt(LAMPORTS_PER_SOL), 5n * U);
  await until(() => seen.some((h) => h.amount === 5n * U), 'the new account');
  t.is(new PublicKey(seen.at(-1)!.account).toBase58(), seen.at(-1)!.account);
  t.is(seen.at(-1)!.delegate, null);
});

/**
 * A WebSocket endpoint that answers the first accountSubscribe of each connection and then goes
 * silent (no pong, nothing): a connection a proxy forgot. Counts connections and subscribes.
 */
async function silentAfterSubscribe() {
  const seen = { connections: 0, subscribes: 0 };
  const server = net.createServer((socket) => {
    seen.connections++;
    let buf = Buffer.alloc(0);
    let upgraded = false;
    let answered = false;
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const key = /sec-websocket-key: *(\S+)/i.exec(buf.subarray(0, end).toString())![1];
        const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
        upgraded = true;
        buf = buf.subarray(end + 4);
      }
      // Client frames (masked, under 64 KB): a text frame carrying a JSON-RPC call is answered once.
      while (buf.length >= 6) {
        const short = buf[1] & 0x7f;
        const head = short === 126 ? 8 : 6; // 16-bit extended length, then the mask
        if (short > 126 || buf.length < head) return;
        const len = short === 126 ? buf.readUInt16BE(2) : short;
        if (buf.length < head + len) return;
        const mask = buf.subarray(head - 4, head);
        const payload = Buffer.from(buf.subarray(head, head + len).map((b, i) => b ^ mask[i % 4]));
        const opcode = buf[0] & 0x0f;
        buf = buf.subarray(head + len);
        if (opcode !== 0x1 || answered) continue;
        const req = JSON.parse(payload.toString());
        if (req.method !== 'accountSubscribe') continue;
        seen.subscribes++;
        answered = true;
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', result: seen.subscribes, id: req.id }));
        socket.write(Buffer.concat([Buffer.from([0x81, body.length]), body]));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `ws://127.0.0.1:${port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('a connection that goes silent is dropped at the next ping and its accounts subscribed again', async (t) => {
  const silent = await silentAfterSubscribe();
  t.teardown(silent.close);
  const subs = new AccountSubscriptions(silent.url, { pingMs: 100, reconnectMs: 50 });
  t.teardown(() => subs.close());
  subs.watch(Keypair.generate().publicKey.toBase58(), () => undefined);
  await until(() => silent.seen.subscribes === 1, 'the first subscription');
  await until(() => silent.seen.connections >= 2 && silent.seen.subscribes >= 2, 'a new connection and subscription', 5_000);
  t.pass();
});

test('pings answered keep the connection and its notifications', async (t) => {
  const { chain, mint, alice, send } = await world(t);
  const subs = new AccountSubscriptions(websocketUrlOf(chain.url), { pingMs: 30 });
  t.teardown(() => subs.close());
  const ata = (await new Web3Gateway(chain.url, null).holding(alice.publicKey.toBase58(), mint)).account;
  const slots: number[] = [];
  subs.watch(ata, (_a, slot) => slots.push(slot));
  await until(() => chain.subscriptions('account') === 1, 'the subscription');
  await new Promise((r) => setTimeout(r, 400)); // a dozen pings
  t.is(chain.subscriptions('account'), 1);
  send(1n * U);
  await until(() => slots.length === 1, 'the change told on the same connection');
  t.pass();
});
