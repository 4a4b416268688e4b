/** `colloquy migrate`: applies pending migrations to COLLOQUY_DB. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../config.js';
import { migrate } from '../store/migrate.js';
import type { Io } from './io.js';

export async function migrateCommand(io: Io): Promise<number> {
  const config = loadConfig(io.env);
  if (config.db !== ':memory:') mkdirSync(dirname(config.db), { recursive: true });
  const db = new Database(config.db);
  try {
    db.pragma('journal_mode = WAL');
    const report = migrate(db);
    if (io.json) io.out(`${JSON.stringify({ db: config.db, ...report })}\n`);
    else {
      io.out(`${config.db}: ${report.applied.length ? `applied ${report.applied.join(', ')}` : 'up to date'}` + ` (${report.alreadyApplied.length} already applied)\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}
