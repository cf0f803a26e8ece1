// The partitioner's murmur2 gives kafkajs's (the Java client's) hash for every key: random ASCII
// keys of every length, non-ASCII keys (hashed as UTF-8), and the keys the service uses.
import test from 'ava';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { murmur2, partitionFor } from '../../../src/runtime/partitioner.ts';

const require = createRequire(import.meta.url);
const kafkajs: (key: string | Buffer) => number = require('kafkajs/src/producer/partitioners/default/murmur2.js');

test('murmur2 agrees with kafkajs on ASCII, UTF-8 and service keys', (t) => {
  const keys: string[] = [
    '',
    'a',
    'ab',
    'abc',
    'abcd',
    'vault',
    '18446744073709551615',
    'wallet:7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
  ];
  for (let i = 0; i < 5000; i++)
    keys.push(
      randomBytes(i % 97)
        .toString('base64')
        .slice(0, i % 61),
    );
  for (let i = 0; i < 500; i++) keys.push(`märkt-${i}-€-${String.fromCodePoint(0x1f600 + (i % 50))}`);
  let differ = 0;
  for (const k of keys) if (murmur2(k) !== kafkajs(k)) differ++;
  t.is(differ, 0);
  for (const k of keys.slice(0, 200)) t.is(partitionFor(k, 12), (kafkajs(k) & 0x7fffffff) % 12);
  t.is(partitionFor('anything', 1), 0);
});
