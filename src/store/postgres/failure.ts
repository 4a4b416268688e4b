/**
 * Why a PostgreSQL database could not be opened, as a sentence that names the place (its password
 * hidden) and what to check: a refused password, a missing database, nothing listening, an unknown
 * host. The operator commands and `serve` print it as it is.
 */
import { ColloquyError, StoreError, StoreUnavailableError } from '../../errors.js';
import { redactUrl } from '../location.js';

/** The parts of a URL a message names (never its password). */
interface Place {
  readonly where: string;
  readonly user: string;
  readonly host: string;
  readonly port: string;
  readonly database: string;
}

/**
 * `err`, from opening or migrating the database at `url`, as an error whose message is a sentence:
 * a {@link StoreUnavailableError} when a later attempt may get through (nothing listening, an
 * unknown or unreachable host), else a {@link StoreError}. Colloquy's own errors pass unchanged.
 */
export function openFailure(err: unknown, url: string): unknown {
  const e = (err instanceof StoreUnavailableError ? err.cause : err) as { code?: unknown; message?: unknown } | undefined;
  if (err instanceof ColloquyError && !(err instanceof StoreUnavailableError)) return err;
  const code = typeof e?.code === 'string' ? e.code : '';
  const p = placeOf(url);
  const said = typeof e?.message === 'string' ? e.message : String(e);
  const refused = (c: string, m: string) => new StoreError(c, `${p.where}: ${m}`, { cause: err });
  const away = (m: string) => new StoreUnavailableError(code, `${p.where}: ${m}`, { cause: err });
  switch (code) {
    case '28P01':
      return refused('database_login', `PostgreSQL refused the password for user "${p.user}": check the user name and password in the URL`);
    case '28000':
      return refused('database_login', `PostgreSQL refused the login (${said}): check the user name in the URL and the server's pg_hba.conf`);
    case '3D000':
      return refused('database_missing', `there is no database "${p.database}" on that server: create it (createdb ${p.database}) or correct the database name in the URL`);
    case 'ECONNREFUSED':
      return away(`nothing accepts connections at ${p.host}:${p.port} (connection refused): is PostgreSQL running there, and are the host and port right?`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return away(`the host "${p.host}" cannot be found (${code}): check the host name in the URL`);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return away(`${p.host}:${p.port} cannot be reached (${code}): check the host, the port and the network in between`);
  }
  if (err instanceof StoreUnavailableError) return away(`PostgreSQL is unavailable: ${said}`);
  if (/^[0-9A-Z]{5}$/.test(code)) return refused('database', `PostgreSQL answered: ${said} (SQLSTATE ${code})`);
  return err;
}

function placeOf(url: string): Place {
  const where = redactUrl(url);
  try {
    const u = new URL(url);
    const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
    return { where, user: decodeURIComponent(u.username) || '(default user)', host: u.hostname || 'localhost', port: u.port || '5432', database };
  } catch {
    return { where, user: '(unknown)', host: '(unknown)', port: '(unknown)', database: '(unknown)' };
  }
}
