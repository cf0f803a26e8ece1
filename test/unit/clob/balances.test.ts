// The node's balance watch alone, on a stand-in chain: one read per (wallet, mint) while watched,
// subscriptions bounded (least recently used dropped and unsubscribed), changes told to the wallet.
import test from 'ava';
import { BalanceWatch } from '../../../src/clob/balances.ts';
import type { ChainGateway, TokenHolding } from '../../../src/chain/gateway.ts';

function standIn() {
  const reads: string[] = [];
  const live = new Map<string, (h: TokenHolding) => void>();
  const holding = (amount: bigint, slot: number): TokenHolding => ({ account: 'ata', amount, delegate: null, delegatedAmount: 0n, slot });
  let down = false;
  const chain = {
    async holding(owner: string, mint: string) {
      reads.push(`${owner}|${mint}`);
      if (down) throw new Error('rpc down');
      return holding(100n, 1);
    },
    watchHolding(owner: string, mint: string, onChange: (h: TokenHolding) => void) {
      live.set(`${owner}|${mint}`, onChange);
      return async () => {
        live.delete(`${owner}|${mint}`);
      };
    },
  } as unknown as ChainGateway;
  return {
    chain,
    reads,
    live,
    holding,
    set down(v: boolean) {
      down = v;
    },
  };
}

test('a watched wallet is read once; changes are told; the least recently used is dropped and unsubscribed', async (t) => {
  const c = standIn();
  const told: string[] = [];
  const watch = new BalanceWatch({
    chain: () => c.chain,
    max: 2,
    seen: async (wallet, asset, h) => {
      told.push(`${wallet}:${asset}:${h.amount}@${h.slot}`);
    },
  });
  t.is((await watch.seed('w1', 'm', 'collateral'))?.amount, 100n, 'first sight: one read');
  t.is(await watch.seed('w1', 'm', 'collateral'), null, 'then none');
  t.deepEqual(c.reads, ['w1|m']);
  c.live.get('w1|m')!(c.holding(40n, 7));
  t.deepEqual(told, ['w1:collateral:40@7']);

  await watch.seed('w2', 'm', 'collateral');
  await watch.seed('w1', 'm', 'collateral'); // w1 used again: w2 is now the oldest
  await watch.seed('w3', 'm', 'collateral');
  t.is(watch.size, 2);
  t.deepEqual([...c.live.keys()].sort(), ['w1|m', 'w3|m'], 'w2 unsubscribed');
  await watch.seed('w2', 'm', 'collateral');
  t.deepEqual(c.reads, ['w1|m', 'w2|m', 'w3|m', 'w2|m'], 'dropped, then seen again: read again');
  await watch.stop();
  t.is(c.live.size, 0, 'stop unsubscribes every account');
});

test('a failed first read is tried again on a later order, not on every one', async (t) => {
  const c = standIn();
  const watch = new BalanceWatch({ chain: () => c.chain, max: 10, retryMs: 60_000, seen: async () => undefined });
  c.down = true;
  t.is(await watch.seed('w', 'm', 'collateral'), null);
  t.is(await watch.seed('w', 'm', 'collateral'), null);
  t.is(c.reads.length, 1, 'no second try inside retryMs');
  await t.throwsAsync(() => watch.read('w', 'm'), { message: 'rpc down' });
  c.down = false;
  t.is((await watch.read('w', 'm')).amount, 100n);
  t.is(await watch.seed('w', 'm', 'collateral'), null, 'an explicit read seeds it');
  t.is(c.reads.length, 3);
  await watch.stop();
});

test('an account neither read nor notified for refreshMs is read again in the background, the order not held up', async (t) => {
  const c = standIn();
  const told: string[] = [];
  const watch = new BalanceWatch({
    chain: () => c.chain,
    max: 10,
    refreshMs: 50,
    seen: async (wallet, asset, h) => {
      told.push(`${wallet}:${asset}:${h.amount}`);
    },
  });
  t.truthy(await watch.seed('w', 'm', 'collateral'));
  t.is(await watch.seed('w', 'm', 'collateral'), null, 'fresh: no read');
  await new Promise((r) => setTimeout(r, 60));
  c.live.get('w|m')!(c.holding(70n, 3)); // a notification counts as news
  t.is(await watch.seed('w', 'm', 'collateral'), null);
  t.is(c.reads.length, 1, 'notified lately: no read');
  await new Promise((r) => setTimeout(r, 60));
  t.is(await watch.seed('w', 'm', 'collateral'), null, 'the order goes on at once');
  await new Promise((r) => setTimeout(r, 10));
  t.is(c.reads.length, 2, 'one read in the background');
  t.deepEqual(told, ['w:collateral:70', 'w:collateral:100'], 'its result told to the wallet');
  await watch.stop();
});
