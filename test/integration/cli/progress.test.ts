// The ops CLI's progress bar: redrawn in place on a TTY (throttled), plain lines at 10 % steps
// elsewhere, nothing with --quiet; and the package bin answers --help.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { Progress } from '../../../src/cli/progress.ts';

function sink(isTTY: boolean) {
  const out: string[] = [];
  return {
    out,
    stream: {
      isTTY,
      columns: 80,
      write: (s: string) => {
        out.push(s);
        return true;
      },
    },
  };
}

test('on a TTY the bar redraws one line and ends with a newline', async (t) => {
  const s = sink(true);
  const p = new Progress('work', 100, { stream: s.stream });
  p.set(10);
  await new Promise((r) => setTimeout(r, 120));
  p.set(50, 'note');
  p.finish('done');
  t.true(s.out.length >= 2);
  for (const w of s.out) t.true(w.startsWith('\r\x1b[2K'));
  t.regex(s.out[s.out.length - 1], /work \[#{12}\.{12}\] 50\.0% 50\/100 .* done\n$/);
  t.true(
    s.out.slice(0, -1).every((w) => !w.endsWith('\n')),
    'redrawn in place until the end',
  );
  t.true(
    s.out.every((w) => w.length <= 80 || w.endsWith('\n')),
    'fits the terminal',
  );
});

test('elsewhere it prints a plain line per 10 % step; --quiet prints nothing', (t) => {
  const s = sink(false);
  const p = new Progress('scan', 1000, { stream: s.stream });
  for (let i = 1; i <= 1000; i++) p.set(i);
  p.finish();
  t.true(s.out.length >= 10 && s.out.length <= 13, String(s.out.length));
  for (const l of s.out) {
    t.true(l.endsWith('\n'));
    t.false(l.includes('\r'));
  }
  t.regex(s.out[s.out.length - 1], /scan \[#{24}\] 100\.0% 1000\/1000/);
  const q = sink(false);
  const quiet = new Progress('x', 10, { stream: q.stream, quiet: true });
  quiet.set(5);
  quiet.finish();
  t.deepEqual(q.out, []);
});

test('a resumed job counts what was done before but not in its rate', (t) => {
  const s = sink(false);
  const p = new Progress('resume', 100, { stream: s.stream }).resumeAt(60);
  p.finish();
  t.regex(s.out[0], /60\.0% 60\/100 0\.0\/s/);
});

test('the package bin (npx parlay-clob-ops) runs the CLI', (t) => {
  const r = spawnSync(process.execPath, ['bin/parlay-clob-ops.mjs', '--help'], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /parlay-clob-ops <command>/);
  t.regex(r.stdout, /reconcile --since-slot/);
  const none = spawnSync(process.execPath, ['bin/parlay-clob-ops.mjs'], { encoding: 'utf8' });
  t.is(none.status, 2, 'no command: usage, exit 2');
});
