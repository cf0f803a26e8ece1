// kafkajs's request queue as src/runtime/kafka-request-queue.ts leaves it (the real kafkajs class):
// no timer armed while nothing waits, a request held by the broker's throttle sent once the
// throttle ends (also when it ends within the millisecond it was queued: kafkajs PR 1532's case),
// and a requests-in-order queue under throttling.
import test from 'ava';
import { fixKafkajsRequestQueue, kafkajsRequestQueue } from '../../../src/runtime/kafka-request-queue.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Waits until `done()` or `ms` have passed (timers run late on a loaded machine: no fixed sleep). */
async function until(done: () => boolean, ms = 3000) {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
}

function queue() {
  const RequestQueue = kafkajsRequestQueue();
  const q = new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 1000,
    enforceRequestTimeout: false,
    clientId: 't',
    broker: 'b',
    logger: quiet,
  });
  const sent: { id: number; at: number }[] = [];
  let id = 0;
  const push = () => {
    const correlationId = ++id;
    q.push({
      entry: { correlationId, apiKey: 1, apiName: 'Fetch', apiVersion: 11, resolve() {}, reject() {} },
      expectResponse: false,
      sendRequest: () => sent.push({ id: correlationId, at: performance.now() }),
    });
  };
  return { q, sent, push };
}

test.before(() => {
  if (!fixKafkajsRequestQueue()) throw new Error('kafkajs is not the version the fix was written for: look at it again');
});

test('an idle queue arms no timer: neither after a check nor after a request sent at once', async (t) => {
  const { q, sent, push } = queue();
  q.checkPendingRequests();
  t.is(q.throttleCheckTimeoutId, null);
  push();
  t.is(sent.length, 1);
  t.is(q.throttleCheckTimeoutId, null);
  // kafkajs 2.2.4 re-armed a 1 ms timer from every check: count the checks of an idle second.
  let checks = 0;
  const check = q.checkPendingRequests.bind(q);
  q.checkPendingRequests = () => {
    checks++;
    check();
  };
  q.checkPendingRequests();
  await new Promise((r) => setTimeout(r, 300));
  t.is(checks, 1);
  q.destroy();
});

test('a request held by a throttle is sent when it ends, not before', async (t) => {
  const { q, sent, push } = queue();
  q.maybeThrottle(60);
  const queued = performance.now();
  push();
  push();
  t.is(sent.length, 0);
  t.not(q.throttleCheckTimeoutId, null);
  await until(() => sent.length === 2);
  t.deepEqual(
    sent.map((s) => s.id),
    [1, 2],
  );
  t.true(sent[0].at - queued >= 55, `sent ${sent[0].at - queued} ms after it was queued`);
  t.is(q.throttleCheckTimeoutId, null, 'nothing waits: no timer');
  q.destroy();
});

test('a throttle that ends as the request is queued still lets it go (kafkajs PR 1532)', async (t) => {
  for (let round = 0; round < 20; round++) {
    const { q, sent, push } = queue();
    q.throttledUntil = Date.now() + (round % 3); // ends now, or within 2 ms
    push();
    await until(() => sent.length === 1);
    t.is(sent.length, 1, `round ${round}`);
    q.destroy();
  }
});
