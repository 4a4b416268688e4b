import { describe, expect, it, vi } from 'vitest';
import { ColloquyError, DriverMissingError, StoreUnavailableError, isColloquyError } from '../src/index.js';

describe('isColloquyError', () => {
  it('knows an error thrown by another copy of the package, where instanceof does not', async () => {
    vi.resetModules();
    const other = (await import('../src/errors.js')) as typeof import('../src/errors.js');
    const foreign = new other.StoreUnavailableError('SQLITE_BUSY', 'busy');
    expect(other.ColloquyError).not.toBe(ColloquyError);
    expect(foreign instanceof ColloquyError).toBe(false);
    expect(isColloquyError(foreign)).toBe(true);
    expect(isColloquyError(foreign) && foreign.code).toBe('store_unavailable');
  });

  it('says no to other errors and look-alikes', () => {
    expect(isColloquyError(new Error('x'))).toBe(false);
    expect(isColloquyError({ code: 'config', message: 'x' })).toBe(false);
    expect(isColloquyError(null)).toBe(false);
    expect(isColloquyError('store_unavailable')).toBe(false);
    expect(isColloquyError(new StoreUnavailableError('57P01', 'gone'))).toBe(true);
  });

  it('a missing driver is a store error with a code and the command that installs it', () => {
    const err = new DriverMissingError('pg', 'The PostgreSQL store');
    expect(err).toBeInstanceOf(ColloquyError);
    expect(err.code).toBe('driver_missing');
    expect(err.driver).toBe('pg');
    expect(err.message).toBe('The PostgreSQL store needs the pg package, which is not installed: npm install pg');
  });
});
