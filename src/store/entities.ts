// MikroORM entity schemas: the read models of the parlay mirror and the runtime's own tables.
import { defineEntity, p } from '@mikro-orm/core';

export const Parlay = defineEntity({
  name: 'Parlay',
  tableName: 'parlays',
  properties: {
    parlayId: p.bigint().fieldName('parlay_id').primary().autoincrement(false),
    id: p.uuid(),
    userWallet: p.string().fieldName('user_wallet'),
    stake: p.bigint(),
    combinedProbability: p.bigint().fieldName('combined_probability'),
    potentialPayout: p.bigint().fieldName('potential_payout'),
    actualPayout: p.bigint().fieldName('actual_payout'),
    status: p.string().length(16),
    legsTotal: p.integer().fieldName('legs_total'),
    legsWon: p.integer().fieldName('legs_won'),
    legsLost: p.integer().fieldName('legs_lost'),
    legsResolved: p.integer().fieldName('legs_resolved'),
    txSignature: p.string().fieldName('tx_signature'),
    claimTxSignature: p.string().fieldName('claim_tx_signature').default(''),
    createdAt: p.datetime().fieldName('created_at'),
    settledAt: p.datetime().fieldName('settled_at').nullable(),
    claimedAt: p.datetime().fieldName('claimed_at').nullable(),
    /** The Parlay actor's positions ([status, counters, payout]) and voided flag: its state is its rows. */
    positions: p.json().nullable(),
    voided: p.boolean().default(false),
  },
  indexes: [
    // SPEC 2.2: lookups by (user_wallet, status), wallets compared case-insensitively; by (status, newest first).
    {
      name: 'parlays_wallet_status_idx',
      expression: 'create index "parlays_wallet_status_idx" on "parlays" (lower("user_wallet"), "status", "created_at" desc)',
    },
    {
      name: 'parlays_status_created_idx',
      expression: 'create index "parlays_status_created_idx" on "parlays" ("status", "created_at" desc)',
    },
    { name: 'parlays_created_idx', expression: 'create index "parlays_created_idx" on "parlays" ("created_at" desc)' },
  ],
});

export const ParlayLeg = defineEntity({
  name: 'ParlayLeg',
  tableName: 'parlay_legs',
  properties: {
    parlayId: p.bigint().fieldName('parlay_id').primary().autoincrement(false),
    legIndex: p.integer().fieldName('leg_index').primary(),
    onChainMarketId: p.bigint().fieldName('on_chain_market_id'),
    marketAddress: p.string().fieldName('market_address'),
    selectedOutcome: p.string().fieldName('selected_outcome').length(8),
    probabilityAtEntry: p.integer().fieldName('probability_at_entry'),
    status: p.string().length(16),
    resolvedAt: p.datetime().fieldName('resolved_at').nullable(),
  },
  uniques: [{ name: 'parlay_legs_parlay_market_uniq', properties: ['parlayId', 'onChainMarketId'] }],
  indexes: [{ name: 'parlay_legs_market_status_idx', properties: ['onChainMarketId', 'status'] }],
});

export const Vault = defineEntity({
  name: 'Vault',
  tableName: 'vault',
  properties: {
    id: p.integer().primary(),
    vaultAddress: p.string().fieldName('vault_address').default(''),
    balance: p.bigint().default(0),
    totalStaked: p.bigint().fieldName('total_staked').default(0),
    totalPaidOut: p.bigint().fieldName('total_paid_out').default(0),
    totalExposure: p.bigint().fieldName('total_exposure').default(0),
    maxPayoutCap: p.bigint().fieldName('max_payout_cap').default(0),
    maxLegs: p.integer().fieldName('max_legs').default(0),
    minStake: p.bigint().fieldName('min_stake').default(0),
    maxStake: p.bigint().fieldName('max_stake').default(0),
    isActive: p.boolean().fieldName('is_active').default(true),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

export const ProgramConfig = defineEntity({
  name: 'ProgramConfig',
  tableName: 'program_config',
  properties: {
    id: p.integer().primary(),
    authority: p.string(),
    collateralMint: p.string().fieldName('collateral_mint'),
    vault: p.string(),
    maxLegs: p.integer().fieldName('max_legs'),
    minStake: p.bigint().fieldName('min_stake'),
    maxStake: p.bigint().fieldName('max_stake'),
    maxPayoutCap: p.bigint().fieldName('max_payout_cap'),
    exposureRatioBps: p.integer().fieldName('exposure_ratio_bps'),
    houseEdgeBps: p.integer().fieldName('house_edge_bps'),
    paused: p.boolean(),
    slot: p.bigint(),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

export const AppUser = defineEntity({
  name: 'AppUser',
  tableName: 'users',
  properties: {
    id: p.string().primary(),
    wallet: p.string().nullable(),
    isSuperuser: p.boolean().fieldName('is_superuser').default(false),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
  indexes: [{ name: 'users_wallet_lower_idx', expression: 'create index "users_wallet_lower_idx" on "users" (lower("wallet"))' }],
});

/** Commands already applied, by idempotency key, with the answer first given. */
export const CommandInbox = defineEntity({
  name: 'CommandInbox',
  tableName: 'command_inbox',
  properties: {
    key: p.string().primary(),
    reply: p.json(),
    /** The record that first applied the command (a replay applies exactly that one). */
    sourceTopic: p.string().fieldName('source_topic').nullable(),
    sourcePartition: p.integer().fieldName('source_partition').nullable(),
    sourceOffset: p.bigint().fieldName('source_offset').nullable(),
    createdAt: p.datetime().fieldName('created_at'),
  },
  indexes: [{ name: 'command_inbox_created_at_idx', properties: ['createdAt'] }],
});

export const DeadLetter = defineEntity({
  name: 'DeadLetter',
  tableName: 'dead_letters',
  properties: {
    id: p.bigint().primary().autoincrement(),
    source: p.string().unique(),
    reason: p.text(),
    payload: p.text(),
    /** The key of the record it came from (runtime dead letters: what a replay re-sends it with). */
    recordKey: p.text().fieldName('record_key').nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    /** When an operator re-sent it to its topic (ops replay-dead-letters). */
    replayedAt: p.datetime().fieldName('replayed_at').nullable(),
  },
});

/**
 * The content of each program event the mirror took, by its identity (the transaction's signature
 * and the event's position among the transaction's events of the program): `key` is the first 128
 * bits of SHA-256(`signature:position`), `content` the first 128 bits of the SHA-256 of the event's
 * bytes, each as 16 bytes. A second, different payload for the same identity is a dead letter, not a
 * new fact.
 */
export const ParlayEventIdentity = defineEntity({
  name: 'ParlayEventIdentity',
  tableName: 'parlay_event_identities',
  properties: {
    key: p.type('bytea').primary(),
    content: p.type('bytea'),
  },
});

/** The next offset to consume per (group, topic, partition): committed with the effects it produced. */
export const ConsumerOffset = defineEntity({
  name: 'ConsumerOffset',
  tableName: 'consumer_offsets',
  properties: {
    groupId: p.string().primary().fieldName('group_id'),
    topic: p.string().primary(),
    partition: p.integer().primary(),
    nextOffset: p.bigint().fieldName('next_offset'),
    /** Where recovery starts reading to rebuild actors newer than their snapshots (null: next_offset). */
    replayFrom: p.bigint().fieldName('replay_from').nullable(),
    owner: p.string(),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

/** Actor state as of `next_offset` of its partition. */
export const ActorSnapshot = defineEntity({
  name: 'ActorSnapshot',
  tableName: 'actor_snapshots',
  properties: {
    kind: p.string().primary(),
    key: p.string().primary(),
    state: p.json(),
    topic: p.string(),
    partition: p.integer(),
    nextOffset: p.bigint().fieldName('next_offset'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

/**
 * The input journal of a bus that keeps no log (the in-process bus): the commands that changed an
 * actor since its snapshot, in order; an actor loads as its snapshot plus these. A snapshot deletes them.
 */
export const ActorJournal = defineEntity({
  name: 'ActorJournal',
  tableName: 'actor_journal',
  properties: {
    id: p.bigint().primary().autoincrement(),
    kind: p.string(),
    key: p.string(),
    topic: p.string(),
    partition: p.integer(),
    envelope: p.text(),
    createdAt: p.datetime().fieldName('created_at').defaultRaw('now()'),
  },
});

/** The market catalog shared by the order book and the parlay side (contracts/clob.md, Markets). */
export const Market = defineEntity({
  name: 'Market',
  tableName: 'markets',
  properties: {
    conditionId: p.string().primary().fieldName('condition_id'),
    question: p.text().default(''),
    yesTokenId: p.string().fieldName('yes_token_id'),
    noTokenId: p.string().fieldName('no_token_id'),
    /** micro-units of collateral per token unit (0.01 = 10000) */
    tickSize: p.bigint().fieldName('tick_size'),
    minSize: p.bigint().fieldName('min_size'),
    takerFeeBps: p.integer().fieldName('taker_fee_bps'),
    startTime: p.datetime().fieldName('start_time').nullable(),
    delayMs: p.integer().fieldName('delay_ms').default(0),
    status: p.string().length(16),
    onChainMarketId: p.bigint().fieldName('on_chain_market_id').nullable().unique(),
    marketAddress: p.string().fieldName('market_address').nullable(),
    /** the catalog's reference price of YES, micro-units */
    referencePrice: p.bigint().fieldName('reference_price').nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
  indexes: [
    { name: 'markets_yes_token_idx', properties: ['yesTokenId'] },
    { name: 'markets_no_token_idx', properties: ['noTokenId'] },
  ],
});

/** Sign-in messages already used (each is accepted once). */
export const AuthSignIn = defineEntity({
  name: 'AuthSignIn',
  tableName: 'auth_signins',
  properties: {
    address: p.string().primary(),
    timestamp: p.bigint().primary(),
    createdAt: p.datetime().fieldName('created_at'),
  },
});

/** Messages a batch commits for other actors or topics; a relay sends them after the commit. */
export const Outbox = defineEntity({
  name: 'Outbox',
  tableName: 'outbox',
  properties: {
    id: p.bigint().primary().autoincrement(),
    topic: p.string(),
    key: p.string(),
    value: p.text(),
    createdAt: p.datetime().fieldName('created_at'),
    /** A forwarded command's reply headers (the asker's reply topic and correlation id). */
    headers: p.json<Record<string, string>>().nullable(),
    /** A forwarded command's idempotency key: its worker deletes the row once it sent it. */
    msgKey: p.string().fieldName('msg_key').nullable(),
    /** The relay sends the row from then on (a forwarded command: only if its worker could not). */
    relayAfter: p.datetime().fieldName('relay_after').defaultRaw('now()'),
  },
});

/** The ledger's view of orders (contracts/clob.md, OpenOrder): finished orders stay readable. */
export const OpenOrder = defineEntity({
  name: 'OpenOrder',
  tableName: 'open_orders',
  properties: {
    id: p.string().primary(),
    market: p.string(),
    assetId: p.string().fieldName('asset_id'),
    owner: p.string(),
    ownerLc: p.string().fieldName('owner_lc'),
    side: p.string().length(4),
    outcome: p.string().length(3),
    originalSize: p.bigint().fieldName('original_size'),
    sizeMatched: p.bigint().fieldName('size_matched'),
    price: p.integer(),
    status: p.string().length(16),
    associateTrades: p.json().fieldName('associate_trades'),
    type: p.string().length(3),
    feeRateBps: p.integer().fieldName('fee_rate_bps'),
    expiration: p.bigint(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
  indexes: [
    { name: 'open_orders_owner_market_idx', properties: ['ownerLc', 'market', 'status'] },
    { name: 'open_orders_market_status_idx', properties: ['market', 'status'] },
  ],
});

/** One taker execution (contracts/clob.md, TradeSummary). */
export const Trade = defineEntity({
  name: 'Trade',
  tableName: 'trades',
  properties: {
    id: p.string().primary(),
    takerOrderId: p.string().fieldName('taker_order_id'),
    market: p.string(),
    assetId: p.string().fieldName('asset_id'),
    side: p.string().length(4),
    outcome: p.string().length(3),
    size: p.bigint(),
    price: p.integer(),
    notional: p.bigint(),
    feeRateBps: p.integer().fieldName('fee_rate_bps'),
    fee: p.bigint(),
    status: p.string().length(16),
    matchType: p.string().fieldName('match_type').length(16),
    matchTime: p.datetime().fieldName('match_time'),
    lastUpdate: p.datetime().fieldName('last_update'),
    owner: p.string(),
    makerAddress: p.string().fieldName('maker_address'),
    transactionHash: p.string().fieldName('transaction_hash').default(''),
    makerOrders: p.json().fieldName('maker_orders'),
  },
  indexes: [
    { name: 'trades_market_time_idx', expression: 'create index "trades_market_time_idx" on "trades" ("market", "match_time" desc)' },
  ],
});

/** Who took part in a trade, for the caller-scoped trade reads. */
export const TradeParty = defineEntity({
  name: 'TradeParty',
  tableName: 'trade_parties',
  properties: {
    tradeId: p.string().primary().fieldName('trade_id'),
    addressLc: p.string().primary().fieldName('address_lc'),
    role: p.string().primary().length(5),
    market: p.string(),
    assetId: p.string().fieldName('asset_id'),
    matchTime: p.datetime().fieldName('match_time'),
  },
  indexes: [
    {
      name: 'trade_parties_address_time_idx',
      expression: 'create index "trade_parties_address_time_idx" on "trade_parties" ("address_lc", "match_time" desc)',
    },
  ],
});

/** The public ledger, per market and topic with a gap-free `seq`, append-only: published to
 *  ledger.orders / ledger.trades (up to its topic's mark in `ledger_published`) and served as
 *  Server-Sent Events. */
export const LedgerMessage = defineEntity({
  name: 'LedgerMessage',
  tableName: 'ledger_messages',
  properties: {
    market: p.string().primary(),
    topic: p.string().primary().length(16),
    seq: p.bigint().primary(),
    type: p.string().length(32),
    /** the order's owner (lower case) for order messages; null for public ones */
    ownerLc: p.string().fieldName('owner_lc').nullable(),
    payload: p.json(),
    at: p.datetime(),
  },
});

/** What the ledger relay has published: every message of (market, topic) up to `seq` went out. */
export const LedgerPublished = defineEntity({
  name: 'LedgerPublished',
  tableName: 'ledger_published',
  properties: {
    market: p.string().primary(),
    topic: p.string().primary().length(16),
    seq: p.bigint(),
  },
});

/** A curated combo (issue 7): figures as of its last refresh; legs in parlay_template_legs. */
export const ParlayTemplate = defineEntity({
  name: 'ParlayTemplate',
  tableName: 'parlay_templates',
  properties: {
    id: p.bigint().primary().autoincrement(),
    name: p.string().length(200),
    description: p.text().default(''),
    displayOrder: p.integer().fieldName('display_order').default(0),
    isActive: p.boolean().fieldName('is_active').default(true),
    /** 1e12 fixed point, as the parlay field */
    combinedProbability: p.bigint().fieldName('combined_probability').nullable(),
    /** micro-units paid for a stake of one unit, after the house edge */
    payoutPerUnit: p.bigint().fieldName('payout_per_unit').nullable(),
    houseEdgeBps: p.integer().fieldName('house_edge_bps').nullable(),
    stale: p.boolean().default(false),
    staleReason: p.text().fieldName('stale_reason').nullable(),
    refreshedAt: p.datetime().fieldName('refreshed_at').nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
  indexes: [{ name: 'parlay_templates_display_idx', properties: ['isActive', 'displayOrder', 'id'] }],
});

/** A template leg: a catalog market (condition_id) or a demo leg (negative demo_market_id, no market). */
export const ParlayTemplateLeg = defineEntity({
  name: 'ParlayTemplateLeg',
  tableName: 'parlay_template_legs',
  properties: {
    templateId: p.bigint().fieldName('template_id').primary().autoincrement(false),
    legIndex: p.integer().fieldName('leg_index').primary(),
    conditionId: p.string().fieldName('condition_id').length(66).nullable(),
    demoMarketId: p.bigint().fieldName('demo_market_id').nullable(),
    demoQuestion: p.text().fieldName('demo_question').nullable(),
    selectedOutcome: p.string().fieldName('selected_outcome').length(8),
    /** micro (1e6), as of the last refresh; a demo leg's is the admin's */
    probability: p.integer().nullable(),
    probabilitySource: p.string().fieldName('probability_source').length(16).nullable(),
  },
  uniques: [
    { name: 'parlay_template_legs_market_uniq', properties: ['templateId', 'conditionId'] },
    { name: 'parlay_template_legs_demo_uniq', properties: ['templateId', 'demoMarketId'] },
  ],
  indexes: [{ name: 'parlay_template_legs_condition_idx', properties: ['conditionId'] }],
});

/** The suggestions read model: one row holding the public JSON, its ETag and how long it holds. */
export const ParlaySuggestions = defineEntity({
  name: 'ParlaySuggestions',
  tableName: 'parlay_suggestions',
  properties: {
    id: p.integer().primary().autoincrement(false),
    payload: p.text(),
    etag: p.string().length(80),
    validUntil: p.datetime().fieldName('valid_until').nullable(),
    builtAt: p.datetime().fieldName('built_at'),
  },
});

/** The settlement executor (issue 5): one row per trade taken to the chain. */
export const Settlement = defineEntity({
  name: 'Settlement',
  tableName: 'settlements',
  properties: {
    tradeId: p.string().fieldName('trade_id').primary(),
    market: p.string(),
    status: p.string().length(16),
    attempts: p.integer().default(0),
    cuLimit: p.integer().fieldName('cu_limit'),
    cuPrice: p.bigint().fieldName('cu_price'),
    signature: p.string().length(128).nullable(),
    reason: p.text().nullable(),
    culprits: p.json().default('[]'),
    reconciled: p.boolean().default(false),
    nextAt: p.datetime().fieldName('next_at'),
    /** the step that holds the trade now (a token of that step) and until when (src/settlement/README.md) */
    leaseOwner: p.string().length(64).fieldName('lease_owner').nullable(),
    leaseUntil: p.datetime().fieldName('lease_until').nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
  indexes: [
    {
      name: 'settlements_pending_idx',
      expression: `create index "settlements_pending_idx" on "settlements" ("next_at") where "status" not in ('CONFIRMED', 'FAILED') or not "reconciled"`,
    },
  ],
});

/** One signed settlement transaction, stored before it is sent. */
export const SettlementAttempt = defineEntity({
  name: 'SettlementAttempt',
  tableName: 'settlement_attempts',
  properties: {
    tradeId: p.string().fieldName('trade_id').primary(),
    attempt: p.integer().primary().autoincrement(false),
    signature: p.string().length(128).unique('settlement_attempts_signature_idx'),
    tx: p.text(),
    blockhash: p.string().length(64),
    lastValidBlockHeight: p.bigint().fieldName('last_valid_block_height'),
    cuLimit: p.integer().fieldName('cu_limit'),
    cuPrice: p.bigint().fieldName('cu_price'),
    outcome: p.string().length(32).nullable(),
    createdAt: p.datetime().fieldName('created_at'),
  },
});

/** Cancel-on-disconnect (src/clob/heartbeats.ts): a wallet's last heartbeat and its expiry claim. */
export const ClobHeartbeat = defineEntity({
  name: 'ClobHeartbeat',
  tableName: 'clob_heartbeats',
  properties: {
    wallet: p.string().primary(),
    ownerLc: p.string().fieldName('owner_lc'),
    /** armed, expiring (claimed by a node), expired, off */
    state: p.string().length(16),
    timeoutMs: p.integer().fieldName('timeout_ms'),
    lastSeenAt: p.datetime().fieldName('last_seen_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    beats: p.bigint().default(0),
    claimedBy: p.string().fieldName('claimed_by').nullable(),
    claimedAt: p.datetime().fieldName('claimed_at').nullable(),
    expiredAt: p.datetime().fieldName('expired_at').nullable(),
    cancelled: p.integer().default(0),
    createdAt: p.datetime().fieldName('created_at'),
  },
  indexes: [
    {
      name: 'clob_heartbeats_due_idx',
      expression: `create index "clob_heartbeats_due_idx" on "clob_heartbeats" ("expires_at") where "state" in ('armed', 'expiring')`,
    },
  ],
});

/** Persisted cursors of the ops CLI's long commands (src/cli/jobs.ts). */
export const OpsJob = defineEntity({
  name: 'OpsJob',
  tableName: 'ops_jobs',
  properties: {
    id: p.string().primary(),
    kind: p.string().length(64),
    status: p.string().length(16),
    params: p.json(),
    state: p.json(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

/** The work list of an ops job (e.g. the signatures a reconcile run applies). */
export const OpsJobItem = defineEntity({
  name: 'OpsJobItem',
  tableName: 'ops_job_items',
  properties: {
    jobId: p.string().primary().fieldName('job_id'),
    seq: p.integer().primary(),
    item: p.json(),
    done: p.boolean().default(false),
  },
});

export const entities = [
  LedgerMessage,
  LedgerPublished,
  OpenOrder,
  Trade,
  TradeParty,
  Outbox,
  Parlay,
  ParlayLeg,
  Vault,
  ProgramConfig,
  AppUser,
  CommandInbox,
  DeadLetter,
  ParlayEventIdentity,
  ConsumerOffset,
  ActorSnapshot,
  ActorJournal,
  Market,
  AuthSignIn,
  ParlayTemplate,
  ParlayTemplateLeg,
  ParlaySuggestions,
  Settlement,
  SettlementAttempt,
  ClobHeartbeat,
  OpsJob,
  OpsJobItem,
];
