/**
 * What both stores can keep exactly as it came. Text inside a JSON column (a message's body, its
 * titles, a flow's answers, the raw payload) is kept faithfully on both, NUL and unpaired
 * surrogates included, since JSON escapes them (`\u0000`, `\ud800`). A value in a column of its
 * own (an id, a status, an agent's name, a release note) is not: PostgreSQL's TEXT cannot hold
 * U+0000, and both engines store an unpaired surrogate as U+FFFD, so two different ids would become
 * one. Such values are refused up front with a 400 that names the field, the same on both stores.
 */

/** The longest id accepted (message, status, SMS ids…). Real ones are under 100 characters. */
export const MAX_ID_LENGTH = 256;

/** The longest delivery status accepted (`sent`, `delivered`…, kept with the message id in a unique key). */
export const MAX_STATUS_LENGTH = 64;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `value` cannot be an id (of at most `max` characters, counted as code points like the
 * provider's limits, so an id a bot may send always comes back), or undefined when it can. Empty is
 * the caller's to judge.
 */
export function idProblem(value: string, max = MAX_ID_LENGTH): string | undefined {
  const length = value.length > max ? codePoints(value) : value.length;
  if (length > max) return `must be at most ${max} characters (got ${length})`;
  if (hasControl(value)) return 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (it has an unpaired surrogate)';
  return undefined;
}

/** Why `value` cannot be stored as text in a column of its own, or undefined when it can. */
export function bareTextProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (it has an unpaired surrogate)';
  return undefined;
}

/** How many code points `value` has (an unpaired surrogate counts as one). */
function codePoints(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff || i === 0 || (value.charCodeAt(i - 1) & 0xfc00) !== 0xd800) n++;
  }
  return n;
}

/** Whether `value` holds a C0 control (NUL included), DEL or a C1 control: never part of an id. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
