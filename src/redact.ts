/**
 * Redaction of secrets from whatever is kept or logged: one function for every provider answer,
 * error body and record, so that no path forgets a field. A leaf: it imports nothing.
 */

/**
 * The one redaction of the framework: a copy of `value` (a string, or any JSON-like value: a
 * provider's answer, a send result, an error body) with every occurrence of the given secrets
 * replaced by `censor` (default `[redacted]`), in strings at any depth and in object keys. The
 * value itself comes back when it holds none. A provider that echoes the request (its `Authorization` header, a token,
 * the client secret) in any field of its answer would otherwise put them in the database and logs.
 * Each secret is also redacted in the forms a request carries it in, URL-encoded
 * (`encodeURIComponent`) and form-encoded (`URLSearchParams`, `+` for a space), since an answer
 * may echo the request's form body. Secrets shorter than 4 characters are ignored (they would
 * blank out ordinary text).
 */
export function redact<T>(value: T, secrets: readonly (string | undefined)[], censor = '[redacted]'): T {
  const live = secrets.filter((s): s is string => s !== undefined && s.length >= 4);
  return live.length === 0 ? value : (scrub(value, { secrets: withEncodings(live), censor }, 0) as T);
}

/** Every secret as is, URL-encoded and form-encoded; the longest first, so none leaves a piece of another. */
function withEncodings(secrets: readonly string[]): string[] {
  const all = new Set<string>();
  for (const s of secrets) {
    all.add(s);
    all.add(encodeURIComponent(s));
    all.add(new URLSearchParams({ s }).toString().slice('s='.length));
  }
  return [...all].sort((a, b) => b.length - a.length);
}

interface Scrub {
  readonly secrets: readonly string[];
  readonly censor: string;
}

function scrub(value: unknown, s: Scrub, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value, s);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 64) {
    // A freak answer nested this deep is scrubbed as text rather than walked any further.
    const json = JSON.stringify(value);
    const clean = scrubText(json, s);
    return clean === json ? value : (JSON.parse(clean) as unknown);
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => scrub(v, s, depth + 1));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = scrubText(k, s);
    const clean = scrub(v, s, depth + 1);
    if (key !== k || clean !== v) changed = true;
    out[key] = clean;
  }
  return changed ? out : value;
}

function scrubText(text: string, s: Scrub): string {
  let out = text;
  for (const secret of s.secrets) if (out.includes(secret)) out = out.split(secret).join(s.censor);
  return out;
}
