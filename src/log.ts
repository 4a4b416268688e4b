/** The logger Colloquy writes to: pino's shape (`logger.info(obj, msg)`), so pino plugs straight in. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;

/** A logger that drops everything (the default for the library; `colloquy serve` uses pino). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** An error as a loggable object: name, code and message, never a stack for expected errors. */
export function errorInfo(err: unknown): { name: string; message: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, ...(typeof code === 'string' && { code }) };
  }
  return { name: 'Error', message: String(err) };
}
