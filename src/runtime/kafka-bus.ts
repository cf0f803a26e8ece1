// Kafka bus (kafkajs): the durable transport of cluster mode. Partitions are chosen by the shared
// partitioner; a consumer group gives each partition one owner; offsets of record are kept by the
// runtime in the database, Kafka's committed offsets only tell a new owner roughly where to start.
import type { Kafka as KafkaClient, Consumer, Producer, Admin, Message } from 'kafkajs';
import { kafkajs } from './kafka-crc.ts';
import { partitionFor } from './partitioner.ts';
import type { Bus, ConsumeOptions, ConsumerHandle, InRecord, OutRecord, TopicSpec } from './types.ts';

const { Kafka, logLevel, Partitioners } = kafkajs;

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  log?: { warn(o: object, m?: string): void; error(o: object, m?: string): void };
  sessionTimeoutMs?: number;
  /** Replication factor of topics this bus creates (1 for a single broker). */
  replicationFactor?: number;
  heartbeatIntervalMs?: number;
}

const MAX_REQUEST_BYTES = 512 * 1024;
/** Kafka's committed offsets are a hint (the runtime's own are in the database): sent at most this often. */
const COMMIT_EVERY_MS = 1000;
/** One handled batch: at most this many records, and about this many bytes. */
const MAX_BATCH_RECORDS = 5_000;
const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/** How long an idle fetch waits at the broker unless the consumer says (ConsumeOptions.idleWaitMs). */
const DEFAULT_IDLE_WAIT_MS = 100;
/** How long a fetch waits for the batches it brought before fetching again (see eachBatch). */
const FETCH_PACE_MS = 100;
/** A partition whose fetched, unhandled records pass this is paused until half of them are handled. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export class KafkaBus implements Bus {
  readonly durable = true;
  private kafka: KafkaClient;
  private producer: Producer;
  private admin: Admin;
  private partitionCounts = new Map<string, number>();
  private consumers = new Set<Consumer>();
  private started: Promise<void>;
  /** Sends waiting for the produce request in flight to return (see `send`). */
  private queued: { topic: string; messages: Message[]; bytes: number; resolve(): void; reject(e: unknown): void }[] = [];
  private flushing = false;

  constructor(private opts: KafkaBusOptions) {
    const log = opts.log;
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log: entry }) => {
          if (!log) return;
          const { message, ...rest } = entry;
          if (level <= logLevel.ERROR) log.error({ kafka: rest }, message);
          else log.warn({ kafka: rest }, message);
        },
      retry: { initialRetryTime: 100, retries: 8 },
    });
    // Partitions are chosen here (partitionFor) on every record; the partitioner option only silences kafkajs.
    this.producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    this.admin = this.kafka.admin();
    this.started = Promise.all([this.producer.connect(), this.admin.connect()]).then(() => undefined);
  }

  async ensureTopics(specs: TopicSpec[]): Promise<void> {
    await this.started;
    const existing = new Set(await this.admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.topic));
    if (missing.length) {
      try {
        await this.admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((s) => ({
            topic: s.topic,
            numPartitions: s.partitions,
            replicationFactor: this.opts.replicationFactor ?? 1,
          })),
        });
      } catch (e: any) {
        // Another node created it first: fine, as long as its metadata shows up below.
        const already = e?.type === 'TOPIC_ALREADY_EXISTS' || (e?.errors ?? []).every((x: any) => x?.type === 'TOPIC_ALREADY_EXISTS');
        if (!already) throw e;
      }
    }
    // A topic just created (here or by another node) may take a moment to be served everywhere.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const meta = await this.admin.fetchTopicMetadata({ topics: specs.map((s) => s.topic) });
        if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) {
          for (const t of meta.topics) this.partitionCounts.set(t.name, t.partitions.length);
          return;
        }
      } catch (e) {
        if (Date.now() > deadline) throw e;
      }
      if (Date.now() > deadline) throw new Error(`topics ${specs.map((s) => s.topic).join(', ')} have no leaders`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async offsets(topic: string): Promise<{ partition: number; low: bigint; high: bigint }[]> {
    await this.started;
    const rows = await this.admin.fetchTopicOffsets(topic);
    return rows
      .map((r) => ({ partition: r.partition, low: BigInt(r.low), high: BigInt(r.high) }))
      .sort((a, b) => a.partition - b.partition);
  }

  /** Members of a consumer group right now (ops: nothing may own a partition being replayed). */
  async groupMembers(groupId: string): Promise<{ memberId: string; clientId: string; host: string }[]> {
    await this.started;
    const { groups } = await this.admin.describeGroups([groupId]);
    return (groups[0]?.members ?? []).map((m) => ({ memberId: m.memberId, clientId: m.clientId, host: m.clientHost }));
  }

  /** Deletes consumer groups (ops: the throwaway groups of a replay); missing ones are ignored. */
  async deleteGroups(groupIds: string[]): Promise<void> {
    await this.started;
    await this.admin.deleteGroups(groupIds).catch(() => undefined);
  }

  /** A metadata round trip to the cluster, bounded in time. */
  async ping(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Kafka did not answer in time')), timeoutMs);
    });
    try {
      await Promise.race([this.started.then(() => this.admin.describeCluster()), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  partitionsOf(topic: string): number {
    const n = this.partitionCounts.get(topic);
    if (n === undefined) throw new Error(`topic ${topic} not ensured`);
    return n;
  }

  private async partitionsKnown(topic: string): Promise<number> {
    const n = this.partitionCounts.get(topic);
    if (n !== undefined) return n;
    const meta = await this.admin.fetchTopicMetadata({ topics: [topic] });
    const count = meta.topics[0]?.partitions.length ?? 0;
    if (!count) throw new Error(`topic ${topic} does not exist`);
    this.partitionCounts.set(topic, count);
    return count;
  }

  /**
   * Natural batching: while one produce request is in flight, sends queue up, and the next request
   * carries all of them (up to ~512 KB), in call order. Idle, a send goes out at once; under load,
   * many asks and replies share one request and one write instead of one each.
   */
  async send(topic: string, records: OutRecord[]): Promise<void> {
    await this.started;
    const n = await this.partitionsKnown(topic);
    let bytes = 0;
    const messages = records.map((r) => {
      bytes += r.value.length + r.key.length;
      return { key: r.key, value: r.value, headers: r.headers, partition: partitionFor(r.key, n) };
    });
    await new Promise<void>((resolve, reject) => {
      this.queued.push({ topic, messages, bytes, resolve, reject });
      if (!this.flushing) {
        // Sends issued in the same turn (a worker's replies and forwards to several topics, the
        // ledger relay's two topics) share the first request too, not only those queued behind it.
        this.flushing = true;
        queueMicrotask(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queued.length) {
        let take = 0;
        let bytes = 0;
        while (take < this.queued.length && (take === 0 || bytes + this.queued[take].bytes <= MAX_REQUEST_BYTES))
          bytes += this.queued[take++].bytes;
        const batch = this.queued.splice(0, take);
        const byTopic = new Map<string, Message[]>();
        for (const q of batch) {
          const list = byTopic.get(q.topic);
          if (list) list.push(...q.messages);
          else byTopic.set(q.topic, [...q.messages]);
        }
        try {
          await this.producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          for (const q of batch) q.resolve();
        } catch (e) {
          for (const q of batch) q.reject(e);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  async consume(opts: ConsumeOptions): Promise<ConsumerHandle> {
    await this.started;
    const sessionTimeout = this.opts.sessionTimeoutMs ?? 3000;
    const idleWaitMs = opts.idleWaitMs ?? DEFAULT_IDLE_WAIT_MS;
    const consumer = this.kafka.consumer({
      groupId: opts.groupId,
      sessionTimeout,
      // kafkajs heartbeats between fetches: a longer idle wait spaces them out as well (kept to at
      // most a third of the session, so that two can be late before the member is dropped).
      heartbeatInterval: Math.min(Math.max(this.opts.heartbeatIntervalMs ?? 300, 2 * idleWaitMs), Math.floor(sessionTimeout / 3)),
      rebalanceTimeout: 10_000,
      // A fetch returns as soon as any record arrives; the wait only bounds idle polling (and how late a seek or rebalance is seen).
      maxWaitTimeInMs: idleWaitMs,
      allowAutoTopicCreation: false,
      retry: { initialRetryTime: 100, retries: 30 },
    });
    this.consumers.add(consumer);
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const assignment = e.payload.memberAssignment as Record<string, number[]>;
      opts.onAssignment?.(Object.entries(assignment).flatMap(([topic, ps]) => ps.map((partition) => ({ topic, partition }))));
    });
    await consumer.connect();
    await consumer.subscribe({ topics: opts.topics, fromBeginning: opts.fromBeginning });
    const concurrency = opts.topics.reduce((a, t) => a + (this.partitionCounts.get(t) ?? 1), 0);
    const dirty = new Map<string, { topic: string; partition: number; offset: string }>();
    const commitDirty = () => {
      if (!dirty.size) return Promise.resolve();
      const list = [...dirty.values()];
      dirty.clear();
      return consumer.commitOffsets(list).catch(() => undefined);
    };
    const committer = setInterval(() => void commitDirty(), COMMIT_EVERY_MS);
    committer.unref();
    // No lockstep: kafkajs fetches every partition of a member in one request and waits until every
    // batch of the response is handled before it fetches again, so one slow commit would hold back
    // every other partition. Here a fetched batch only joins its partition's queue; each partition
    // drains its queue on its own, everything queued at once as one batch (big batches under load,
    // one record when idle), while fetching goes on. A partition whose queue is full is paused.
    const feeds = new Map<string, Feed>();
    const tpOf = (f: Feed) => [{ topic: f.topic, partitions: [f.partition] }];
    const settlePause = (f: Feed) => {
      const want = f.full || f.retryTimer !== null;
      if (want === f.paused || f.gone) return;
      f.paused = want;
      if (want) consumer.pause(tpOf(f));
      else consumer.resume(tpOf(f));
    };
    const drain = async (f: Feed) => {
      f.running = true;
      try {
        while (f.queue.length && !f.gone && f.retryTimer === null) {
          let take = 0;
          let bytes = 0;
          while (take < f.queue.length && take < MAX_BATCH_RECORDS && (take === 0 || bytes < MAX_BATCH_BYTES))
            bytes += sizeOf(f.queue[take++]);
          const records = f.queue.splice(0, take);
          f.bytes -= bytes;
          if (f.full && f.bytes <= MAX_QUEUED_BYTES / 2) {
            f.full = false;
            settlePause(f);
          }
          let outcome;
          try {
            outcome = await opts.onBatch({ topic: f.topic, partition: f.partition, records });
          } catch (e) {
            this.opts.log?.error({ err: e, topic: f.topic, partition: f.partition }, 'batch failed; redelivering');
            outcome = { seek: records[0].offset, retryInMs: 100 };
          }
          if (f.gone) return;
          if ('seek' in outcome) {
            // What is queued came after the batch that asked to go back: dropped, fetched again.
            f.queue = [];
            f.bytes = 0;
            f.full = false;
            f.next = outcome.seek;
            consumer.seek({ topic: f.topic, partition: f.partition, offset: outcome.seek.toString() });
            if (outcome.retryInMs) {
              f.retryTimer = setTimeout(() => {
                f.retryTimer = null;
                settlePause(f);
              }, outcome.retryInMs);
            }
            settlePause(f);
            return;
          }
          const end = records[records.length - 1].offset + 1n;
          // The group's committed position is where the next owner starts fetching: where replay must begin.
          const next = (outcome.resumeFrom !== undefined && outcome.resumeFrom < end ? outcome.resumeFrom : end).toString();
          dirty.set(`${f.topic}:${f.partition}`, { topic: f.topic, partition: f.partition, offset: next });
        }
      } finally {
        f.running = false;
        for (const w of f.waiters.splice(0)) w();
        f.idle?.();
      }
    };
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const assignment = e.payload.memberAssignment as Record<string, number[]>;
      const keep = new Set(Object.entries(assignment).flatMap(([topic, ps]) => ps.map((p) => `${topic}:${p}`)));
      for (const [k, f] of feeds) {
        if (keep.has(k)) continue;
        forget(f);
        feeds.delete(k);
      }
    });
    const forget = (f: Feed) => {
      f.gone = true;
      f.queue = [];
      f.bytes = 0;
      if (f.retryTimer) clearTimeout(f.retryTimer);
      f.retryTimer = null;
    };
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: Math.max(1, concurrency),
      eachBatch: async ({ batch, isStale, isRunning, resolveOffset }) => {
        if (!batch.messages.length || isStale() || !isRunning()) return;
        const k = `${batch.topic}:${batch.partition}`;
        let f = feeds.get(k);
        if (!f) {
          f = newFeed(batch.topic, batch.partition);
          feeds.set(k, f);
        }
        if (f.retryTimer !== null) return; // paused for a retry: fetched again from the seek when it resumes
        let records = batch.messages.map((m) => ({
          topic: batch.topic,
          partition: batch.partition,
          offset: BigInt(m.offset),
          key: m.key?.toString() ?? '',
          value: m.value?.toString() ?? '',
          headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([hk, v]) => [hk, String(v ?? '')])),
        }));
        // Records already queued (a fetch that overlapped the last one) are not queued twice.
        const from = f.next;
        if (from !== null) records = records.filter((r) => r.offset >= from);
        // kafkajs fetches from after what is resolved: the next fetch asks for what follows.
        resolveOffset(batch.messages[batch.messages.length - 1].offset);
        if (!records.length) return;
        for (const r of records) f.bytes += sizeOf(r);
        f.queue.push(...records);
        f.next = records[records.length - 1].offset + 1n;
        if (!f.full && f.bytes > MAX_QUEUED_BYTES) {
          f.full = true;
          settlePause(f);
        }
        if (!f.running) void drain(f);
        // Paced, not in lockstep: the next fetch waits for this partition's batch at most
        // FETCH_PACE_MS, so that what arrives meanwhile is fetched together (fewer, bigger batches,
        // as kafkajs's lockstep gave), while a slow partition holds the others back no longer.
        if (f.running)
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, FETCH_PACE_MS);
            f.waiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
      },
    });
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        clearInterval(committer);
        await consumer.stop();
        // Batches being handled finish (their commits are fenced anyway should another member own them now).
        await Promise.all(
          [...feeds.values()].map((f) => {
            f.queue = [];
            return f.running ? new Promise<void>((r) => (f.idle = r)) : undefined;
          }),
        );
        for (const f of feeds.values()) forget(f);
        await commitDirty();
        await consumer.disconnect();
      },
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.disconnect()));
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
  }
}

/** A partition's records fetched and not yet handled (see `consume`). */
interface Feed {
  topic: string;
  partition: number;
  queue: InRecord[];
  bytes: number;
  /** The offset after the last record queued (or the last seek): a re-fetched record below it is not queued again. */
  next: bigint | null;
  running: boolean;
  /** Paused for being full (backpressure). */
  full: boolean;
  /** Paused until a failed batch may be retried. */
  retryTimer: NodeJS.Timeout | null;
  paused: boolean;
  /** No longer this member's (revoked, or the consumer stopped). */
  gone: boolean;
  idle?: () => void;
  /** Fetches waiting (at most FETCH_PACE_MS) for the batch being handled. */
  waiters: (() => void)[];
}

const newFeed = (topic: string, partition: number): Feed => ({
  topic,
  partition,
  queue: [],
  bytes: 0,
  next: null,
  running: false,
  full: false,
  retryTimer: null,
  paused: false,
  gone: false,
  waiters: [],
});

const sizeOf = (r: InRecord) => r.value.length + r.key.length + 64;
