// The repository's own habits: the layer boundaries of docs/conventions.md are enforced by the lint
// (a deliberate violation of each layer is reported; an allowed import is not), the "allowed today"
// exceptions still name real imports, and the docs need nothing outside the repository.
// No node, database or broker: ESLint's API on code that is never written to disk, and git.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const eslint = new ESLint({ cwd: root });

/** The boundary messages ESLint reports for `code` as if it were the file `file` (repository-relative). */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'local/boundaries').map((m) => m.message);
}

test('the runtime may not import the domain', async (t) => {
  const errors = await boundaryErrors(
    'src/runtime/boundary-probe.ts',
    `import { decodeTransaction } from '../parlay/decode.ts';\nexport const f = decodeTransaction;\n`,
  );
  t.is(errors.length, 1);
  t.regex(errors[0], /^src\/runtime\/ may not import src\/parlay\/decode\.ts: the runtime knows no domain/);
  t.deepEqual(
    await boundaryErrors(
      'src/runtime/boundary-probe.ts',
      `import type { Bus } from './types.ts';\nimport { Kafka } from 'kafkajs';\nexport type B = Bus; export const K = Kafka;\n`,
    ),
    [],
  );
});

test('actors import only topics/, the runtime types and each other, and no package', async (t) => {
  const file = 'actors/parlay/boundary-probe.ts';
  t.deepEqual(
    await boundaryErrors(
      file,
      `import type { Decider } from '../../src/runtime/types.ts';\nimport { TOPICS } from '../../topics/names.ts';\nimport { marketBookDecider } from '../market-book/decider.ts';\nexport type D = Decider<any, any, any, any>; export const x = [TOPICS, marketBookDecider];\n`,
    ),
    [],
  );
  const errors = await boundaryErrors(
    file,
    `import { ClobService } from '../../src/clob/service.ts';\nimport { Asker } from '../../src/runtime/asker.ts';\nimport { randomUUID } from 'node:crypto';\nexport const x = [ClobService, Asker, randomUUID];\n`,
  );
  t.is(errors.length, 3, errors.join('\n'));
  t.regex(errors[0], /actors\/ may not import src\/clob\/service\.ts/);
  t.regex(errors[1], /actors\/ may not import src\/runtime\/asker\.ts/);
  t.regex(errors[2], /actors\/ may not import the package node:crypto/);
});

test('topics/ imports only zod and itself', async (t) => {
  t.deepEqual(
    await boundaryErrors(
      'topics/boundary-probe.ts',
      `import { z } from 'zod';\nimport { TOPICS } from './names.ts';\nexport const x = [z, TOPICS];\n`,
    ),
    [],
  );
  const errors = await boundaryErrors(
    'topics/boundary-probe.ts',
    `import { Kafka } from 'kafkajs';\nimport { toJson } from '../src/runtime/json.ts';\nexport const x = [Kafka, toJson];\n`,
  );
  t.is(errors.length, 2, errors.join('\n'));
});

test('only the composition roots, dev tools, tests and benches import src/http/; allowed-today pairs are exact', async (t) => {
  const code = `import { HttpError } from '../http/errors.ts';\nexport const E = HttpError;\n`;
  const errors = await boundaryErrors('src/settlement/boundary-probe.ts', code);
  t.is(errors.length, 1);
  t.regex(errors[0], /^only src\/http\/, src\/node\.ts, .* may import src\/http\/errors\.ts/);
  // A use case importing src/http fails (mint-merge throws domain errors now).
  t.is((await boundaryErrors('src/settlement/mint-merge.ts', code)).length, 1);
  // The typed client reads the HTTP contract from src/api/, never from src/http.
  t.deepEqual(
    await boundaryErrors('src/client/clob.ts', `import type * as api from '../api/schemas.ts';\nexport type A = api.ClobConfig;\n`),
    [],
  );
  t.is(
    (await boundaryErrors('src/client/clob.ts', `import type * as api from '../http/openapi.ts';\nexport type A = typeof api;\n`)).length,
    1,
  );
  t.is(
    (await boundaryErrors('src/client/clob.ts', `import { rateLimits } from '../http/rate-limit.ts';\nexport const r = rateLimits;\n`))
      .length,
    1,
  );
  t.deepEqual(await boundaryErrors('src/node.ts', `import { buildApp } from './http/app.ts';\nexport const a = buildApp;\n`), []);
  t.deepEqual(
    await boundaryErrors(
      'test/boundary-probe.test.ts',
      `import { rateLimits } from '../src/http/rate-limit.ts';\nexport const r = rateLimits;\n`,
    ),
    [],
  );
});

test('every allowed-today exception (none left today) still names an import the code makes', async (t) => {
  const config = await eslint.calculateConfigForFile(path.join(root, 'src/node.ts'));
  const [, options] = config.rules['local/boundaries'];
  const pairs: [string, string][] = options.allowedToday;
  t.true(Array.isArray(pairs));
  for (const [importer, imported] of pairs) {
    const source = readFileSync(path.join(root, importer), 'utf8');
    const specs = [...source.matchAll(/from\s+'(\.[^']+)'/g)].map((m) => path.posix.join(path.posix.dirname(importer), m[1]));
    t.true(specs.includes(imported), `${importer} no longer imports ${imported}: delete the pair from allowedToday in eslint.config.js`);
  }
});

/** Tracked files (and new ones not ignored) with one of the extensions. */
function repoFiles(...exts: string[]): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  return out.split('\n').filter((f) => f && exts.some((e) => f.endsWith(e)) && existsSync(path.join(root, f)));
}

test('no file points outside the repository for its design, specification, contracts or fixtures', (t) => {
  // Built from parts so that this file does not match itself.
  const outside = new RegExp(['\\.\\./', 'shared/', '|', '\\bshared/(DESIGN|SPEC)\\.md', '|', '\\bshared/(contracts|fixtures)/'].join(''));
  const offenders = repoFiles('.md', '.ts', '.js', '.mjs').filter((f) => outside.test(readFileSync(path.join(root, f), 'utf8')));
  t.deepEqual(offenders, []);
});

test('relative links in README.md and docs/ lead to files of the repository', (t) => {
  const broken: string[] = [];
  for (const f of repoFiles('.md').filter((f) => f === 'README.md' || f.startsWith('docs/'))) {
    for (const m of readFileSync(path.join(root, f), 'utf8').matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target)) continue;
      if (!existsSync(path.join(root, path.dirname(f), target))) broken.push(`${f}: ${target}`);
    }
  }
  t.deepEqual(broken, []);
});
