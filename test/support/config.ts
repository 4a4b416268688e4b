/** The ConfigError `loadConfig` throws for an environment (a test fails when it accepts it). */
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

export function configRefusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('loadConfig accepted it');
}
