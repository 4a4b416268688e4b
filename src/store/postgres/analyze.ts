/**
 * Statistics for a young database. Until autovacuum first analyzes a table (its launcher looks once
 * a minute, `autovacuum_naptime`), PostgreSQL plans from default estimates, and on `conversations`
 * those make the unique active-conversation index and the per-version index cost the same: a turn's
 * lookup of its conversation then walked every active conversation of the bot (0.5 ms at 2,700,
 * growing with the table) in every pooled connection's cached plan. So once a store has committed
 * its first turns, it analyzes the hot tables that were never analyzed (cheap while they are
 * small; cached plans are re-planned after it). A database that has run for a while is not touched.
 */
import type { PgDb } from './db.js';

/** The tables every turn reads by key. */
const HOT_TABLES = ['conversations', 'inbox', 'outbox', 'lanes', 'timers'] as const;

/** After this many turns committed by one store, its hot tables are analyzed if they never were. */
export const ANALYZE_AFTER_TURNS = 100;

/** Analyzes the hot tables that were never analyzed; returns their names. Never throws: statistics are an optimisation. */
export async function analyzeUnanalyzed(db: PgDb): Promise<string[]> {
  try {
    const { rows } = await db.query(
      `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1::text[])
        AND last_analyze IS NULL AND last_autoanalyze IS NULL ORDER BY relname`,
      [HOT_TABLES],
    );
    const tables = rows.map((r) => String(r['relname'])).filter((t) => (HOT_TABLES as readonly string[]).includes(t));
    if (tables.length > 0) await db.query(`ANALYZE ${tables.join(', ')}`);
    return tables;
  } catch {
    return [];
  }
}
