/** `colloquy migrate`: applies pending migrations to the database COLLOQUY_DATABASE_URL (or COLLOQUY_DB) names. */
import { loadConfig } from '../config.js';
import { describeStoreLocation, migrateDatabase } from '../store/open.js';
import type { Io } from './io.js';

export async function migrateCommand(io: Io): Promise<number> {
  const config = loadConfig(io.env);
  const report = await migrateDatabase(config.db);
  const where = describeStoreLocation(config.db);
  if (io.json) io.out(`${JSON.stringify({ db: where, ...report })}\n`);
  else io.out(`${where}: ${report.applied.length ? `applied ${report.applied.join(', ')}` : 'up to date'}` + ` (${report.alreadyApplied.length} already applied)\n`);
  return 0;
}
