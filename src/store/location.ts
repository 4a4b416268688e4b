/** Telling a PostgreSQL URL from a SQLite path, and hiding its password: no driver needed. */

/** Whether a location names a PostgreSQL database. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** A URL with its password hidden, for logs and messages. */
export function redactUrl(location: string): string {
  if (!isPostgresUrl(location)) return location;
  try {
    const u = new URL(location);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return location.replace(/\/\/[^@/]*@/, '//***@');
  }
}
