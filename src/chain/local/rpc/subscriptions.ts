// JSON-RPC subscriptions over WebSocket: signature, slot, account and logs notifications.
import { PublicKey } from '@solana/web3.js';
import type { Chain } from '../chain.ts';
import type { TxRecord } from '../ledger.ts';
import { accountJson, type AccountConfig } from './account-json.ts';
import type { WsConnection } from './websocket.ts';

type Sub =
  | { kind: 'signature'; conn: WsConnection; signature: string }
  | { kind: 'slot'; conn: WsConnection }
  | { kind: 'account'; conn: WsConnection; key: string; config: AccountConfig }
  | { kind: 'logs'; conn: WsConnection; mentions?: string };

const KINDS: Record<string, Sub['kind']> = { signature: 'signature', slot: 'slot', account: 'account', logs: 'logs' };

export class PubSub {
  private nextId = 1;
  private readonly subs = new Map<number, Sub>();

  constructor(private readonly chain: Chain) {
    chain.onLanded((rec) => this.landed(rec));
    chain.ledger.onSlot((slot) => {
      for (const [id, s] of this.subs)
        if (s.kind === 'slot') this.notify(s.conn, 'slotNotification', id, { parent: slot - 1, root: slot, slot });
    });
  }

  /** Subscriptions held, of one kind (for tests). */
  count(kind: Sub['kind']): number {
    let n = 0;
    for (const s of this.subs.values()) if (s.kind === kind) n++;
    return n;
  }

  attach(conn: WsConnection): void {
    conn.onMessage((text) => this.message(conn, text));
    conn.onClose(() => {
      for (const [id, s] of this.subs) if (s.conn === conn) this.subs.delete(id);
    });
  }

  private notify(conn: WsConnection, method: string, subscription: number, result: unknown): void {
    conn.send(JSON.stringify({ jsonrpc: '2.0', method, params: { result, subscription } }));
  }

  private context() {
    return { slot: this.chain.ledger.slot };
  }

  private message(conn: WsConnection, text: string): void {
    let req: { id?: unknown; method?: string; params?: unknown[] };
    try {
      req = JSON.parse(text);
    } catch {
      conn.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      return;
    }
    if (req.id === undefined || req.id === null) return; // notifications such as web3.js's ping
    const reply = (body: object) => conn.send(JSON.stringify({ jsonrpc: '2.0', ...body, id: req.id }));
    const method = req.method ?? '';
    const params = req.params ?? [];
    const m = /^(\w+?)(Subscribe|Unsubscribe)$/.exec(method);
    const kind = m ? KINDS[m[1]] : undefined;
    if (!m || !kind) {
      reply({ error: { code: -32601, message: 'Method not found' } });
      return;
    }
    if (m[2] === 'Unsubscribe') {
      const id = Number(params[0]);
      const ok = this.subs.get(id)?.kind === kind;
      if (ok) this.subs.delete(id);
      reply(ok ? { result: true } : { error: { code: -32602, message: 'Invalid subscription id.' } });
      return;
    }
    const id = this.nextId++;
    try {
      if (kind === 'signature') this.subs.set(id, { kind, conn, signature: String(params[0]) });
      else if (kind === 'slot') this.subs.set(id, { kind, conn });
      else if (kind === 'account')
        this.subs.set(id, { kind, conn, key: new PublicKey(String(params[0])).toBase58(), config: (params[1] ?? {}) as AccountConfig });
      else {
        const filter = params[0] as string | { mentions?: string[] };
        const mentions = typeof filter === 'object' && filter?.mentions?.[0] ? new PublicKey(filter.mentions[0]).toBase58() : undefined;
        this.subs.set(id, { kind, conn, mentions });
      }
    } catch {
      reply({ error: { code: -32602, message: 'Invalid params' } });
      return;
    }
    reply({ result: id });
    if (kind === 'signature') {
      const rec = this.chain.ledger.get(String(params[0]));
      if (rec) this.landed(rec);
    }
  }

  private landed(rec: TxRecord): void {
    const keys = new Set(rec.tx.message.staticAccountKeys.map((k) => k.toBase58()));
    for (const [id, s] of this.subs) {
      if (s.kind === 'signature' && s.signature === rec.signature) {
        this.subs.delete(id);
        this.notify(s.conn, 'signatureNotification', id, { context: { slot: rec.slot }, value: { err: rec.result.err } });
      } else if (s.kind === 'logs' && (!s.mentions || keys.has(s.mentions))) {
        this.notify(s.conn, 'logsNotification', id, {
          context: { slot: rec.slot },
          value: { signature: rec.signature, err: rec.result.err, logs: rec.result.logs },
        });
      } else if (s.kind === 'account' && keys.has(s.key)) {
        const acc = this.chain.svm.get(new PublicKey(s.key)) ?? {
          lamports: 0n,
          data: Buffer.alloc(0),
          owner: PublicKey.default,
          executable: false,
        };
        this.notify(s.conn, 'accountNotification', id, {
          context: this.context(),
          value: accountJson(this.chain.svm, acc, { encoding: 'base64', ...s.config }),
        });
      }
    }
  }
}
