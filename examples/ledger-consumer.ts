// Example stream consumer: follows one market's ledger over SSE (resuming from its last event id
// after a disconnect) and keeps its own record of its fills from `maker_orders` and taker trades,
// detecting gaps by `seq`. Usage:
//   npx tsx examples/ledger-consumer.ts --url http://127.0.0.1:8080 --market 0x… --keypair wallet.json
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Keypair } from '@solana/web3.js';
import { signIn } from '../src/clob/sign-in.ts';

export interface Fill {
  tradeId: string;
  orderId: string;
  role: 'MAKER' | 'TAKER';
  amount: string;
  price: string;
}

/** Keeps a wallet's fills from ledger messages; idempotent on replays, refuses gaps. */
export class FillBook {
  readonly fills = new Map<string, Fill>();
  /** Settlement status of each trade seen: MATCHED, MINED, CONFIRMED (final), RETRYING or FAILED. */
  readonly status = new Map<string, string>();
  private last: Record<string, number> = {};

  constructor(readonly wallet: string) {}

  /** Applies one ledger message; returns false on a gap (resume from an earlier position). */
  apply(msg: any): boolean {
    const topic = msg.topic ?? (String(msg.type).startsWith('trade_') ? 'ledger.trades' : 'ledger.orders');
    const prev = this.last[topic] ?? 0;
    if (msg.seq <= prev) return true; // already seen
    if (msg.seq !== prev + 1) return false;
    this.last[topic] = msg.seq;
    // settlement news (trade_mined, trade_confirmed, trade_retrying, trade_failed): the trade's status
    if (topic === 'ledger.trades' && msg.trade_id) {
      this.status.set(msg.trade_id, msg.status);
      return true;
    }
    if (msg.type !== 'trade_matched') return true;
    this.status.set(msg.trade.id, msg.trade.status);
    const t = msg.trade;
    const me = this.wallet.toLowerCase();
    for (const m of t.maker_orders) {
      if (m.owner.toLowerCase() === me)
        this.fills.set(`${t.id}:${m.order_id}`, {
          tradeId: t.id,
          orderId: m.order_id,
          role: 'MAKER',
          amount: m.matched_amount,
          price: m.price,
        });
    }
    if (t.owner.toLowerCase() === me)
      this.fills.set(`${t.id}:${t.taker_order_id}`, {
        tradeId: t.id,
        orderId: t.taker_order_id,
        role: 'TAKER',
        amount: t.size,
        price: t.price,
      });
    return true;
  }
}

async function main() {
  const { values } = parseArgs({ options: { url: { type: 'string' }, market: { type: 'string' }, keypair: { type: 'string' } } });
  if (!values.url || !values.market || !values.keypair) throw new Error('usage: --url URL --market 0x… --keypair FILE');
  const kp = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(values.keypair, 'utf8'))));
  const book = new FillBook(kp.publicKey.toBase58());
  let lastId = '';
  for (;;) {
    const tok = await fetch(`${values.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signIn(kp.publicKey.toBase58(), kp.secretKey)),
    }).then((r) => r.json());
    const { sse } = await import('../test/helpers/sse.ts');
    const headers: Record<string, string> = { authorization: `Bearer ${tok.access_token}`, ...(lastId ? { 'last-event-id': lastId } : {}) };
    try {
      for await (const ev of sse(`${values.url}/v1/stream?market=${values.market}${lastId ? '' : '&from=beginning'}`, headers)) {
        if (!book.apply(JSON.parse(ev.data))) {
          lastId = '';
          break;
        } // a gap: replay from the start, idempotently
        lastId = ev.id ?? lastId;
        console.log(`fills: ${book.fills.size}`);
      }
    } catch (e) {
      console.error(`stream dropped (${(e as Error).message}); resuming after ${lastId || 'the start'}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
