// Topic names and their keys (DESIGN: keys and topics).
export const TOPICS = {
  /** Decoded program events and parlay-side commands; key = parlay id, or `vault` for vault/config. */
  parlayEvents: 'parlay.events',
  /** Order-book commands; key = market condition id. */
  clobCommands: 'clob.commands',
  /** Wallet reservation commands; key = wallet address. */
  walletCommands: 'wallet.commands',
  /** Public ledger: orders, keyed by market. */
  ledgerOrders: 'ledger.orders',
  /** Public ledger: trades, keyed by market. */
  ledgerTrades: 'ledger.trades',
} as const;

export const VAULT_KEY = 'vault';
