/**
 * Colloquy's errors. Every error the framework throws is a {@link ColloquyError} with a stable
 * `code`; subclasses carry the context needed to act on it (bot, state, endpoint, variable…).
 * Messages never contain secrets or tokens.
 */

/** One problem found while validating a message or a payload. */
export interface Issue {
  /** Where the problem is, as a path into the object (`["listMessages", "sections", 0, "title"]`). */
  readonly path: readonly (string | number)[];
  /** What is wrong, for a person. */
  readonly message: string;
}

/** Formats a path as `a.b[0].c`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out === '' ? '(root)' : out;
}

/** Formats issues one per line, `path: message`. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `  - ${formatPath(i.path)}: ${i.message}`).join('\n');
}

/**
 * Marks Colloquy's errors on their prototype, under a registered symbol: two copies of the package
 * in one process (a bot's dependency and the command's) share it where `instanceof` cannot see
 * across copies.
 */
const BRAND = Symbol.for('colloquy.error');

/** The base of every error Colloquy throws. */
export class ColloquyError extends Error {
  override name = 'ColloquyError';
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
Object.defineProperty(ColloquyError.prototype, BRAND, { value: true });

/**
 * Whether `value` is one of Colloquy's errors, even one thrown by another copy of the package
 * (where `instanceof ColloquyError` is false). Narrows to {@link ColloquyError}, so `code` is there.
 */
export function isColloquyError(value: unknown): value is ColloquyError {
  if (value instanceof ColloquyError) return true;
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true && typeof (value as { code?: unknown }).code === 'string';
}

/** A bad configuration value (an environment variable, an option). */
export class ConfigError extends ColloquyError {
  override name = 'ConfigError';
  /** The variable or option at fault. */
  readonly variable: string;
  constructor(variable: string, message: string, options?: { cause?: unknown }) {
    super('config', `${variable}: ${message}`, options);
    this.variable = variable;
  }
}

/** Where a message came from, when a bot emitted it. */
export interface MessageOrigin {
  readonly bot?: string;
  readonly state?: string;
}

/** A message that breaks the seed's shape or a provider limit. Lists every issue with its path. */
export class MessageValidationError extends ColloquyError {
  override name = 'MessageValidationError';
  readonly issues: readonly Issue[];
  readonly bot: string | undefined;
  readonly state: string | undefined;
  constructor(issues: readonly Issue[], origin: MessageOrigin = {}, options?: { cause?: unknown }) {
    const where = [origin.bot && `bot "${origin.bot}"`, origin.state && `state "${origin.state}"`].filter(Boolean).join(', ');
    super('message_invalid', `Invalid message${where ? ` from ${where}` : ''} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${formatIssues(issues)}`, options);
    this.issues = issues;
    this.bot = origin.bot;
    this.state = origin.state;
  }

  /** The same issues, attributed to a bot and a state. */
  withOrigin(origin: MessageOrigin): MessageValidationError {
    return new MessageValidationError(this.issues, origin, { cause: this.cause });
  }
}

/** Which provider call failed. */
export type Endpoint = 'token' | 'messaging' | 'sms';

/** A provider call that failed: carries the endpoint, HTTP status and the provider's code. */
export class TransportError extends ColloquyError {
  override name = 'TransportError';
  readonly endpoint: Endpoint;
  readonly status: number | undefined;
  readonly providerCode: number | string | undefined;
  readonly retryable: boolean;
  constructor(
    init: {
      endpoint: Endpoint;
      message: string;
      status?: number | undefined;
      providerCode?: number | string | undefined;
      retryable: boolean;
      code?: string;
    },
    options?: { cause?: unknown },
  ) {
    super(init.code ?? 'transport', init.message, options);
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.providerCode = init.providerCode;
    this.retryable = init.retryable;
  }
}

/** The identity provider refused our credentials (`invalid_client`, `unauthorized_client`), or a
 *  fresh token was refused again. A configuration problem: never retried. */
export class AuthError extends TransportError {
  override name = 'AuthError';
  constructor(message: string, init: { status?: number | undefined; providerCode?: string | undefined } = {}, options?: { cause?: unknown }) {
    super({ endpoint: 'token', message, status: init.status, providerCode: init.providerCode, retryable: false, code: 'auth' }, options);
  }
}

/** A storage failure: a changed migration, a version conflict, a broken row. */
export class StoreError extends ColloquyError {
  override name = 'StoreError';
}

/** Another process saved the conversation first; the turn is retried. */
export class VersionConflictError extends StoreError {
  override name = 'VersionConflictError';
  constructor(
    readonly conversationId: number,
    readonly expected: number,
  ) {
    super('version_conflict', `Conversation ${conversationId} was saved by someone else (expected version ${expected})`);
  }
}

/** A bot definition or a bot's behaviour is wrong (not a message: see MessageValidationError). */
export class BotError extends ColloquyError {
  override name = 'BotError';
  readonly bot: string | undefined;
  readonly state: string | undefined;
  constructor(message: string, origin: MessageOrigin = {}, options?: { cause?: unknown }) {
    super('bot', message, options);
    this.bot = origin.bot;
    this.state = origin.state;
  }
}

/**
 * The store cannot do the work right now (SQLite: the database is locked by another process, or a
 * transient I/O error; PostgreSQL: a refused or dropped connection, a failover, a serialization
 * failure or deadlock, a lock wait past its timeout): a later attempt can get past it. It is never
 * the bot's failure: the work is retried with backoff, and a webhook is answered 503 so the
 * provider delivers it again. Not a {@link VersionConflictError}.
 */
export class StoreUnavailableError extends StoreError {
  override name = 'StoreUnavailableError';
  /** The store's own reason code (`SQLITE_BUSY`, `SQLITE_IOERR_WRITE`…; PostgreSQL's SQLSTATE or the socket's errno: `57P01`, `ECONNREFUSED`…). */
  readonly reason: string;
  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super('store_unavailable', message, options);
    this.reason = reason;
  }
}

/**
 * A database driver that is not installed. `better-sqlite3` and `pg` are optional peer
 * dependencies of Colloquy: a project installs the one its store needs. Thrown when a store of
 * that kind opens, with the command that installs the driver.
 */
export class DriverMissingError extends StoreError {
  override name = 'DriverMissingError';
  /** The npm package to install (`better-sqlite3` or `pg`). */
  readonly driver: string;
  constructor(driver: string, who: string, options?: { cause?: unknown }) {
    super('driver_missing', `${who} needs the ${driver} package, which is not installed: npm install ${driver}`, options);
    this.driver = driver;
  }
}

/** Whether `err` is a store fault that a later attempt can get past. */
export function isStoreUnavailable(err: unknown): err is StoreUnavailableError {
  return err instanceof StoreUnavailableError;
}

/**
 * The store failures a payload's values can cause, so that writing them again fails the same way,
 * each with what it means (never the value itself). PostgreSQL's SQLSTATEs, then SQLite's codes.
 * Any other failure, in class 22 or not, is the server's and stays a 5xx.
 */
const UNSTORABLE = new Map([
  ['22001', 'a string too long for its column'],
  ['22003', 'a number out of range'],
  ['22021', 'a byte sequence invalid in the encoding'],
  ['22P02', 'a value of invalid syntax for its type'],
  ['22P05', 'a character the encoding cannot hold'],
  ['54000', 'a value over a program limit (such as an index row too large)'],
  ['SQLITE_TOOBIG', 'a string or blob too big'],
  ['SQLITE_MISMATCH', 'a value of the wrong type for its column'],
]);

/**
 * Why a store failure is about the values written (see {@link isUnstorable}): its code and what it
 * means, without the value; undefined for any other failure. Looks through `cause`s.
 */
export function unstorableReason(err: unknown): string | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof StoreUnavailableError) return undefined;
    const code = (e as { code?: unknown }).code;
    const meaning = typeof code === 'string' ? UNSTORABLE.get(code) : undefined;
    if (meaning !== undefined) return `${code}: ${meaning}`;
  }
  return undefined;
}

/**
 * Whether a store failure is about the values written, so that writing them again fails the same
 * way (PostgreSQL: 22001 string too long, 22003 number out of range, 22021 invalid byte sequence,
 * 22P02 invalid text representation, 22P05 untranslatable character, 54000 program limit such as
 * an index row too large; SQLite: TOOBIG, MISMATCH). Such input is refused with a 4xx, never
 * answered "try again later". Looks through `cause`s.
 */
export function isUnstorable(err: unknown): boolean {
  return unstorableReason(err) !== undefined;
}
