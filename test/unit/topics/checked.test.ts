// topics/checked.ts: what the decoder checked is taken as parsed by its worker in the same process;
// anything else (a copy, text from the bus, an object built by hand) is parsed, and refused if bad.
import test from 'ava';
import { parlayCommands, vaultCommands } from '../../../topics/parlay-events.ts';

const synced = { type: 'VaultSynced', balance: '1000', slot: 7 };

test('a checked command is taken as it is; its copies and its text are parsed again', (t) => {
  const r = vaultCommands.check({ ...synced, extra: 'stripped' });
  t.true(r.success);
  const cmd = r.success ? r.data : null;
  t.true(vaultCommands.parse(cmd) === cmd, 'the very object the check made');
  const copy = { ...cmd };
  t.false(vaultCommands.parse(copy) === copy, 'a copy is parsed: a new object');
  const assigned = Object.assign({}, cmd);
  t.false(vaultCommands.parse(assigned) === assigned, 'so is one made by Object.assign');
  t.deepEqual(Object.keys(cmd!).sort(), Object.keys(synced).sort(), 'the mark is not one of its keys');
  t.deepEqual(vaultCommands.parse(JSON.parse(JSON.stringify(cmd))), synced);
});

test("a bad copy is refused; one schema's check does not vouch for another's", (t) => {
  t.throws(() => vaultCommands.parse({ ...synced, slot: -1 }));
  const r = vaultCommands.check(synced);
  t.true(r.success);
  t.false(vaultCommands.check({ ...synced, balance: 'x' }).success);
  // Another schema's check does not vouch for this one's.
  const other = parlayCommands.check(synced);
  t.false(other.success);
  t.throws(() => parlayCommands.parse(r.success ? r.data : null));
});
