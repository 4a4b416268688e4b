/** Statements written once for both dialects (src/store/sql.ts): compiled for PostgreSQL, valid on both engines. */
import { describe, expect, it } from 'vitest';
import { forPostgres, PG_NOW, pgArgs, sqliteArgs, WORK_SQL } from '../../src/store/sql.js';
import { execAt } from '../support/rows.js';
import { openSqlite, postgres } from './helpers.js';

describe('shared statements', () => {
  it('compiles named parameters to numbered ones, one per name, and the database clock to now()', () => {
    const s = forPostgres('UPDATE t SET a = @dbnow + @ms, b = @owner WHERE c = @owner AND d = @ms_2');
    expect(s).toEqual({ text: `UPDATE t SET a = ${PG_NOW} + $1, b = $2 WHERE c = $2 AND d = $3`, names: ['ms', 'owner', 'ms_2'] });
    expect(pgArgs(s, { owner: 'a', ms: 5, ms_2: 6, unused: 1 })).toEqual([5, 'a', 6]);
    expect(() => pgArgs(s, { owner: 'a', ms: 5 })).toThrow('no value for @ms_2');
  });

  it('binds booleans as 1 and 0 on SQLite', () => {
    expect(sqliteArgs({ lapsed: true, careful: false, n: 3, s: 'x', none: null })).toEqual({ lapsed: 1, careful: 0, n: 3, s: 'x', none: null });
  });

  it('every shared work statement prepares on SQLite and on PostgreSQL', async () => {
    const db = openSqlite().db;
    for (const sql of Object.values(WORK_SQL)) expect(() => db.prepare(sql)).not.toThrow();
    const url = await postgres.fresh();
    for (const [name, sql] of Object.entries(WORK_SQL)) await execAt(url, `PREPARE ${name} AS ${forPostgres(sql).text}`);
  });
});
