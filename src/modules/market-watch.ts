// The front door's markets kept current across nodes: every change of a market row is announced on
// PostgreSQL's `clob_markets` channel (Migration20261206100000's trigger, whoever made it: a node's
// market routes or an operator's SQL), and each node's order index forgets that market as the
// notification arrives. While the notifications are received, the index keeps the markets in
// memory (src/clob/order-index.ts, `watched`); when the connection is lost, everything is
// forgotten and the index reads each market again every MARKET_TTL_MS until it listens again.
import type { NotifyListener } from '../store/notify-listener.ts';
import type { OrderIndex } from '../clob/order-index.ts';

export const MARKETS_CHANNEL = 'clob_markets';

/**
 * Subscribes `orders` to the markets' changes on `notifications`; `listening()` tells whether they
 * are received, `listened` resolves once they are (see NotifyListener.subscribe).
 */
export function watchMarkets(notifications: NotifyListener, orders: () => OrderIndex): { listening(): boolean; listened: Promise<void> } {
  return notifications.subscribe(MARKETS_CHANNEL, {
    onPayload: (id) => (id === '*' ? orders().forgetAllMarkets() : orders().forgetMarket(id)),
    onGap: () => orders().forgetAllMarkets(),
  });
}
