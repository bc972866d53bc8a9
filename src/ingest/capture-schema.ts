/**
 * Schema policy for untrusted captures: a capture is plain tables and their indexes.
 *
 * Works on the rows of `sqlite_schema` (type, name, sql) only, with a small SQL tokenizer; it never
 * asks SQLite to run anything from the schema. The statement kind is taken from the `sql` text (what
 * SQLite itself executes when it loads the schema), not from the `type` column, which a crafted file
 * can set to anything.
 *
 * Refused: triggers, views, virtual tables (FTS and others), and any function call in a table or
 * index definition (CHECK, DEFAULT, generated columns, expression and partial indexes), including
 * the operators that call functions (LIKE, GLOB, REGEXP, MATCH, ->, ->>), and collations other
 * than SQLite's built-in BINARY, NOCASE and RTRIM. The function check is deliberately conservative:
 * anything in an expression that looks like `name(` counts as a call.
 */

export interface SchemaRow {
  type: string;
  name: string;
  tbl_name?: string;
  sql: string | null;
}

export type SchemaKind = 'table' | 'index' | 'view' | 'trigger' | 'virtual_table' | 'unknown';

interface Token {
  kind: 'word' | 'quoted' | 'string' | 'number' | 'blob' | 'punct';
  text: string;
  /** Upper-cased text of an unquoted word (keyword comparisons), '' otherwise. */
  kw: string;
}

/** Tokenizes SQLite SQL well enough to find keywords, identifiers, parentheses and operators. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = sql.length;
  const quoted = (close: string, kind: Token['kind']) => {
    const open = sql[i]!;
    let j = i + 1;
    let text = '';
    for (;;) {
      if (j >= n) throw new Error(`unterminated ${open}`);
      const c = sql[j]!;
      if (c === close) {
        if (close !== ']' && sql[j + 1] === close) {
          text += c;
          j += 2;
          continue;
        }
        break;
      }
      text += c;
      j++;
    }
    out.push({ kind, text, kw: '' });
    i = j + 1;
  };
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const e = sql.indexOf('\n', i);
      i = e < 0 ? n : e + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const e = sql.indexOf('*/', i + 2);
      i = e < 0 ? n : e + 2;
    } else if (c === "'") {
      quoted("'", 'string');
    } else if (c === '"') {
      quoted('"', 'quoted');
    } else if (c === '`') {
      quoted('`', 'quoted');
    } else if (c === '[') {
      quoted(']', 'quoted');
    } else if ((c === 'x' || c === 'X') && sql[i + 1] === "'") {
      i++;
      quoted("'", 'blob');
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(0x[0-9a-f_]+|[0-9_]*\.?[0-9_]*(e[+-]?[0-9_]+)?)/i.exec(sql.slice(i))!;
      out.push({ kind: 'number', text: m[0], kw: '' });
      i += Math.max(m[0].length, 1);
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      const m = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i))!;
      out.push({ kind: 'word', text: m[0], kw: m[0].toUpperCase() });
      i += m[0].length;
    } else {
      const three = sql.slice(i, i + 3);
      const two = sql.slice(i, i + 2);
      const op = three === '->>' ? three : ['->', '||', '<=', '>=', '==', '!=', '<>', '<<', '>>'].includes(two) ? two : c;
      out.push({ kind: 'punct', text: op, kw: '' });
      i += op.length;
    }
  }
  return out;
}

/** The kind of statement a schema `sql` text is. */
export function schemaKind(sql: string | null): SchemaKind {
  if (sql === null) return 'unknown';
  let t: Token[];
  try {
    t = tokenize(sql);
  } catch {
    return 'unknown';
  }
  let i = 0;
  if (t[i]?.kw !== 'CREATE') return 'unknown';
  i++;
  if (t[i]?.kw === 'TEMP' || t[i]?.kw === 'TEMPORARY') i++;
  switch (t[i]?.kw) {
    case 'TABLE':
      return 'table';
    case 'VIRTUAL':
      return 'virtual_table';
    case 'VIEW':
      return 'view';
    case 'TRIGGER':
      return 'trigger';
    case 'INDEX':
      return 'index';
    case 'UNIQUE':
      return t[i + 1]?.kw === 'INDEX' ? 'index' : 'unknown';
    default:
      return 'unknown';
  }
}

/** Keywords that may stand right before '(' in an expression without calling a function. */
const PAREN_KEYWORDS = new Set([
  'AND', 'OR', 'NOT', 'IN', 'IS', 'CAST', 'CASE', 'WHEN', 'THEN', 'ELSE', 'BETWEEN', 'ESCAPE',
  'KEY', 'UNIQUE', 'CHECK', 'DEFAULT', 'AS', 'WHERE', 'ON',
]);
const FUNCTION_OPERATORS = new Set(['LIKE', 'GLOB', 'REGEXP', 'MATCH']);
const BUILTIN_COLLATIONS = new Set(['BINARY', 'NOCASE', 'RTRIM']);

/** A short, printable rendering of a name from an untrusted file, for messages. */
export function printable(name: string, max = 64): string {
  // eslint-disable-next-line no-control-regex
  const clean = name.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max)}...` : clean);
}

/**
 * Finds the first function call (or function-calling operator, or non-built-in collation) in a
 * table or index definition. Returns a description such as "calls function randomblob()", or null.
 */
export function findFunctionUse(kind: 'table' | 'index', sql: string): string | null {
  const t = tokenize(sql);
  const first = t.findIndex((x) => x.kind === 'punct' && x.text === '(');
  if (first < 0) return null;
  let depth = 1;
  for (let i = first + 1; i < t.length; i++) {
    const tok = t[i]!;
    const prev = t[i - 1]!;
    if (tok.kind === 'punct' && tok.text === '(') {
      const named = prev.kind === 'word' || prev.kind === 'quoted';
      const keyword = prev.kind === 'word' && PAREN_KEYWORDS.has(prev.kw);
      // In a table body, `word (` at depth 1 is a type name, a constraint or a REFERENCES target:
      // SQLite's grammar allows no expression there without a keyword and '(' first.
      const tableLevel = kind === 'table' && depth === 1;
      if (named && !keyword && !tableLevel && !isCastType(t, i)) return `calls the function ${printable(`${prev.text}()`)}`;
      depth++;
    } else if (tok.kind === 'punct' && tok.text === ')') {
      depth--;
    } else if (tok.kind === 'punct' && (tok.text === '->' || tok.text === '->>')) {
      return `uses the ${tok.text} operator (a function)`;
    } else if (tok.kind === 'word' && FUNCTION_OPERATORS.has(tok.kw) && (kind === 'index' || depth >= 2)) {
      return `uses the ${tok.kw} operator (a function)`;
    } else if (tok.kind === 'word' && tok.kw === 'COLLATE') {
      const name = t[i + 1];
      if (!name || !BUILTIN_COLLATIONS.has(name.text.toUpperCase())) {
        return `uses collation ${printable(name?.text ?? '')}`;
      }
    }
  }
  return null;
}

/** `CAST(x AS VARCHAR(10))`: the '(' at `i` follows a type name that follows AS. */
function isCastType(t: Token[], i: number): boolean {
  let j = i - 1;
  while (j >= 0 && t[j]!.kind === 'word' && t[j]!.kw !== 'AS') j--;
  if (j < 0 || t[j]!.kw !== 'AS' || j === i - 1) return false;
  // The arguments of a type name are signed numbers only.
  for (let k = i + 1; k < t.length; k++) {
    const x = t[k]!;
    if (x.kind === 'punct' && x.text === ')') return true;
    if (!(x.kind === 'number' || (x.kind === 'punct' && ['+', '-', ','].includes(x.text)))) return false;
  }
  return false;
}

/**
 * Checks one sqlite_schema row. Returns null when it is allowed, else a sentence fragment naming
 * the object, e.g. `trigger "t_ins" is not allowed`.
 */
export function checkSchemaRow(row: SchemaRow): string | null {
  const name = printable(row.name);
  if (row.sql === null) {
    // Automatic indexes of UNIQUE/PRIMARY KEY constraints have no SQL; nothing else may.
    if (row.type === 'index' && row.name.startsWith('sqlite_autoindex_')) return null;
    return `${row.type} ${name} has no SQL definition`;
  }
  const kind = schemaKind(row.sql);
  switch (kind) {
    case 'trigger':
      return `trigger ${name} is not allowed (a capture is plain tables and indexes)`;
    case 'view':
      return `view ${name} is not allowed (a capture is plain tables and indexes)`;
    case 'virtual_table':
      return `virtual table ${name} is not allowed (a capture is plain tables and indexes)`;
    case 'unknown':
      return `schema object ${name} has an unrecognised definition`;
    default:
      break;
  }
  if (kind !== row.type) return `schema object ${name} is recorded as a ${row.type} but defined as a ${kind}`;
  let use: string | null;
  try {
    use = findFunctionUse(kind, row.sql);
  } catch {
    return `${kind} ${name} has a definition that cannot be read`;
  }
  return use ? `${kind} ${name} ${use}` : null;
}
