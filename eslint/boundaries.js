// A local ESLint rule that keeps the layers of docs/conventions.md: which folder may import which.
//
// It reads only the import's text (all imports in this repository are relative with their file
// extension, or a bare package name), so it needs no resolver and cannot silently skip an import it
// failed to resolve. Options (see eslint.config.js):
//   root          the repository root (absolute)
//   layers        [{ name, files, mayImport, packages?, why }]: a file under `files` (a folder
//                 prefix such as 'src/runtime/') may import only paths under `mayImport` (folder
//                 prefixes, or exact files such as 'src/runtime/types.ts') and, when `packages` is
//                 given, only those packages ('node:*' builtins count as packages).
//   guarded       [{ target, importers, why }]: nothing outside `importers` may import `target`.
//   allowedToday  [[importer, imported]]: exact pairs that break a rule today and are tolerated
//                 until they are removed; a new import from the same file still fails.
import path from 'node:path';

const posix = (p) => p.split(path.sep).join('/');
const noExt = (p) => p.replace(/\.(ts|mts|js|mjs)$/, '');
const under = (file, prefix) => (prefix.endsWith('/') ? file.startsWith(prefix) : noExt(file) === noExt(prefix));
const packageName = (spec) =>
  spec.startsWith('node:') ? 'node:*' : spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];

export const boundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the layering of docs/conventions.md (who may import whom)' },
    schema: [{ type: 'object', additionalProperties: true }],
    messages: {
      layer: '{{layer}} may not import {{imported}}: {{why}} (see docs/conventions.md)',
      package: '{{layer}} may not import the package {{imported}}: {{why}} (see docs/conventions.md)',
      guarded: 'only {{importers}} may import {{imported}}: {{why}} (see docs/conventions.md)',
    },
  },
  create(context) {
    const { root, layers = [], guarded = [], allowedToday = [] } = context.options[0] ?? {};
    const file = posix(path.relative(root, context.physicalFilename ?? context.filename));
    if (file.startsWith('..')) return {};
    const layer = layers.find((l) => under(file, l.files));
    const tolerated = new Set(allowedToday.filter(([from]) => from === file).map(([, to]) => noExt(to)));

    function check(node, spec) {
      if (typeof spec !== 'string') return;
      if (!spec.startsWith('.') && !spec.startsWith('/')) {
        if (layer?.packages && !layer.packages.includes(packageName(spec))) {
          context.report({ node, messageId: 'package', data: { layer: layer.files, imported: spec, why: layer.why } });
        }
        return;
      }
      const imported = posix(path.relative(root, path.resolve(path.dirname(context.physicalFilename ?? context.filename), spec)));
      if (tolerated.has(noExt(imported))) return;
      if (layer && !under(imported, layer.files) && !layer.mayImport.some((p) => under(imported, p))) {
        context.report({ node, messageId: 'layer', data: { layer: layer.files, imported, why: layer.why } });
      }
      for (const g of guarded) {
        if (under(imported, g.target) && !under(file, g.target) && !g.importers.some((p) => under(file, p))) {
          context.report({ node, messageId: 'guarded', data: { importers: [g.target, ...g.importers].join(', '), imported, why: g.why } });
        }
      }
    }

    const literal = (n) => (n && n.type === 'Literal' ? n.value : undefined);
    return {
      ImportDeclaration: (n) => check(n.source, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n.source, n.source.value),
      ExportAllDeclaration: (n) => check(n.source, n.source.value),
      ImportExpression: (n) => check(n.source, literal(n.source)),
      TSImportType: (n) => check(n, literal(n.argument?.literal ?? n.argument)),
      CallExpression: (n) => {
        if (n.callee.type === 'Identifier' && n.callee.name === 'require') check(n.arguments[0], literal(n.arguments[0]));
      },
    };
  },
};

export default { rules: { boundaries } };
