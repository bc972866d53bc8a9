import { QueryTypes, type Model, type ModelStatic, type QueryOptions, type Transaction } from 'sequelize';
import type { OnConflict, RawValue, Row } from '../contract.ts';
import { insertRowsSql } from '../insert-sql.ts';
import { dateText, rowsJson, rowsSql } from './json-rows.ts';

function queryInterface(model: ModelStatic<Model>) {
  const sequelize = model.sequelize;
  if (!sequelize) throw new TypeError(`model ${model.name} is not initialised`);
  return { sequelize, qi: sequelize.getQueryInterface() };
}

/**
 * QueryInterface.bulkInsert builds the dialect's own multi-row INSERT without building a model
 * instance per row, which is most of the cost at a few thousand rows a second.
 */
export async function bulkInsert(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<void> {
  if (rows.length === 0) return;
  await queryInterface(model).qi.bulkInsert(model.getTableName(), rows, { transaction: t }, model.getAttributes());
}

/** The query generator's method behind QueryInterface.bulkInsert; its .d.ts does not declare it. */
interface InsertGenerator {
  bulkInsertQuery(table: string, rows: object[], options: object, attributes: object): string;
}

/**
 * One multi-row INSERT built by Sequelize's query generator, with RETURNING id appended (SQLite
 * >= 3.35 takes it; Sequelize's SQLite dialect does not offer it). Ids grow in VALUES order, so
 * sorted ids map back to the rows.
 */
export async function bulkInsertIds(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<number[]> {
  if (rows.length === 0) return [];
  const { sequelize, qi } = queryInterface(model);
  const generator = qi.queryGenerator as InsertGenerator;
  const sql = generator.bulkInsertQuery(model.getTableName() as string, rows, {}, model.getAttributes()).replace(/;\s*$/, '');
  // The leading comment is deliberate: Sequelize's SQLite driver runs any SQL starting with
  // "insert into" with sqlite3's run(), which drops the RETURNING rows; with it, all() is used.
  const returned = (await sequelize.query(`/* bulk insert */ ${sql} RETURNING ${qi.quoteIdentifier('id')}`, {
    type: QueryTypes.SELECT,
    transaction: t,
  })) as { id: number }[];
  return returned.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** INSERT ... ON CONFLICT (conflict) DO UPDATE SET update = excluded.update, as Sequelize's generator writes it. */
export async function upsert(model: ModelStatic<Model>, rows: Row[], conflict: readonly string[], update: readonly string[], t: Transaction): Promise<void> {
  if (rows.length === 0) return;
  const { qi } = queryInterface(model);
  // updateOnDuplicate/upsertKeys reach the query generator but are missing from the QueryOptions type.
  const options: QueryOptions & { updateOnDuplicate: string[]; upsertKeys: string[] } = {
    transaction: t,
    updateOnDuplicate: [...update],
    upsertKeys: [...conflict],
  };
  await qi.bulkInsert(model.getTableName(), rows, options, model.getAttributes());
}

/** The sqlite3 connection a Sequelize transaction holds (Sequelize's SQLite dialect keeps it there). */
interface RawConnection {
  serialize(fn: () => void): void;
  run(sql: string, params: unknown[], cb: (err: Error | null) => void): void;
}

/**
 * One multi-row INSERT (optionally ... ON CONFLICT DO UPDATE) of rows of values in `columns` order:
 * the rows as one JSON parameter read with json_each (json-rows.ts), or, when a value cannot travel
 * exactly as JSON, bound value by value in a multi-row VALUES statement. No query generator, no
 * escaping of values into the text. Dates are written as Sequelize writes them.
 *
 * The statement goes straight to the transaction's sqlite3 connection, in serialized mode, the moment
 * this is called: statements of one transaction run in the order they were issued, so a caller may
 * issue several and await them together (one trip through the thread pool and the event loop for a
 * report batch instead of one per statement), and none pays for Sequelize's query pipeline (bind
 * formatting, logging, a stack trace captured and formatted per query).
 */
export function insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return Promise.resolve();
  const { qi } = queryInterface(model);
  const quote = (c: string) => qi.quoteIdentifier(c);
  const table = model.getTableName() as string;
  const asJson = rowsJson(rows, columns.length);
  let sql: string;
  let bind: (string | number | null)[];
  if (asJson) {
    sql = rowsSql(quote, table, columns, asJson.fractions, onConflict);
    bind = [asJson.json];
  } else {
    sql = insertRowsSql(quote, (n) => `?${n}`, table, columns, rows.length, onConflict);
    bind = [];
    for (const row of rows) for (const v of row) bind.push(v instanceof Date ? dateText(v) : v);
  }
  const conn = (t as unknown as { connection?: RawConnection }).connection;
  if (!conn) return Promise.reject(new TypeError('insertRows needs an open transaction'));
  return new Promise((resolve, reject) => conn.serialize(() => conn.run(sql, bind, (err) => (err ? reject(err) : resolve()))));
}

/**
 * insertRows' statement with its rows written into the text as one JSON string literal, for a
 * write run as SQL text (WritePath.runScript); null when a value cannot travel as JSON. SQLite's
 * string literals know no escapes but a doubled quote, and JSON text holds no raw control characters.
 */
export function insertRowsScript(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], onConflict?: OnConflict): string | null {
  if (rows.length === 0) return '';
  const asJson = rowsJson(rows, columns.length);
  if (!asJson) return null;
  const { qi } = queryInterface(model);
  const sql = rowsSql((c) => qi.quoteIdentifier(c), model.getTableName() as string, columns, asJson.fractions, onConflict);
  const literal = `'${asJson.json.replaceAll("'", "''")}'`;
  return sql.replace('json_each(?1)', () => `json_each(${literal})`);
}
