// The configuration reference, read off the config schema (joi) and the comments of
// config.example.yaml: every key with its type, default and environment variable.
// Used by scripts/docs.mjs for docs/configuration.md and the man page rigd.yaml(5).
import { parseDocument, isMap, isPair, isScalar } from 'yaml';

/** One leaf key of the schema: path, type text, default text, description from the example file. */
export function configKeys(schema, exampleText, envName) {
  const comments = exampleComments(exampleText);
  const keys = [];
  const walk = (desc, path) => {
    if (desc.type === 'object' && desc.keys) {
      for (const [name, child] of Object.entries(desc.keys)) walk(child, [...path, name]);
      return;
    }
    const key = path.join('.');
    keys.push({ key, path, section: path.length > 1 ? path[0] : key, type: typeText(desc), default: defaultText(desc), env: envName(path), description: comments.get(key) ?? '' });
  };
  walk(schema.describe(), []);
  return keys;
}

function rule(desc, name) {
  const found = (desc.rules ?? []).find((r) => r.name === name);
  return found ? (found.args ?? {}) : undefined;
}

function typeText(desc) {
  if (desc.allow && desc.flags?.only) return `one of: ${desc.allow.filter((v) => v !== '').join(', ')}`;
  switch (desc.type) {
    case 'number': {
      const what = rule(desc, 'integer') ? 'integer' : 'number';
      const min = rule(desc, 'min')?.limit;
      const max = rule(desc, 'max')?.limit;
      if (min !== undefined && max !== undefined) return `${what} ${min}..${max}`;
      if (min !== undefined) return `${what} >= ${min}`;
      return what;
    }
    case 'array':
      return 'list (comma-separated in the environment)';
    case 'boolean':
      return 'true or false';
    default:
      return desc.type;
  }
}

function defaultText(desc) {
  const d = desc.flags?.default;
  if (d === undefined) return '';
  if (d === '') return '""';
  return typeof d === 'string' ? d : JSON.stringify(d);
}

/** "section.key" -> the comment lines above that key in config.example.yaml, joined. */
function exampleComments(text) {
  const out = new Map();
  const doc = parseDocument(text);
  const walk = (node, path) => {
    if (!isMap(node)) return;
    node.items.forEach((pair, i) => {
      if (!isPair(pair) || !isScalar(pair.key)) return;
      const keyPath = [...path, String(pair.key.value)];
      // The document's own header comment is not the first key's.
      // The first key's comment belongs to its map node; the document's header comment is no key's.
      const first = i === 0 ? (path.length === 0 ? '' : (node.commentBefore ?? '')) : '';
      const before = pair.key.commentBefore ?? first;
      const text = before.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
      if (text) out.set(keyPath.join('.'), text);
      walk(pair.value, keyPath);
    });
  };
  walk(doc.contents, []);
  return out;
}

const cell = (s) => s.replace(/\|/g, '\\|');

/** docs/configuration.md */
export function configMarkdown(keys) {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts and the comments of config.example.yaml by scripts/docs.mjs',
    '     (npm run build). Do not edit: change the schema or the example file, build, and commit this file. -->',
    '',
    'Every key is optional; the default applies when it is not set. Lookup: `--config FILE`, else',
    '`$RIGD_CONFIG`, else `/etc/rigd/config.yaml`, else the defaults. Each key can be set from the',
    'environment under the name in the table (lists comma-separated); the environment wins over the',
    'file, and `/etc/rigd/rigd.env` is read as environment. Every value is checked when any command',
    'starts: a wrong one stops it with one line naming the key and exit 2. How the file is found, the',
    'environment file and what is checked: [operate.md](operate.md#configuration). The same reference',
    'is on the gateway as `man rigd.yaml`.',
    '',
  ];
  let section = null;
  for (const k of keys) {
    if (k.section !== section) {
      section = k.section;
      lines.push(`## ${section}`, '', '| key | type | default | environment | what it does |', '|---|---|---|---|---|');
    }
    lines.push(`| \`${k.key}\` | ${cell(k.type)} | ${k.default === '' ? '' : `\`${cell(k.default)}\``} | \`${k.env}\` | ${cell(k.description)} |`);
    const next = keys[keys.indexOf(k) + 1];
    if (!next || next.section !== section) lines.push('');
  }
  return lines.join('\n');
}
