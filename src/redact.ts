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

/** The last few secret lists' encodings: a send redacts with the same few secrets every time. */
const encoded = new Map<string, readonly string[]>();

/** Every secret as is, URL-encoded and form-encoded; the longest first, so none leaves a piece of another. */
function withEncodings(secrets: readonly string[]): readonly string[] {
  const key = secrets.join('\u0000');
  let all = encoded.get(key);
  if (all === undefined) {
    all = encodings(secrets);
    if (encoded.size >= 16) encoded.delete(encoded.keys().next().value as string);
    encoded.set(key, all);
  }
  return all;
}

function encodings(secrets: readonly string[]): string[] {
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
  // The copy is made only once something in it changed: most answers hold no secret.
  let out: Record<string, unknown> | undefined;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = (value as Record<string, unknown>)[k];
    const key = scrubText(k, s);
    const clean = scrub(v, s, depth + 1);
    if (out === undefined && (key !== k || clean !== v)) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j] as string] = (value as Record<string, unknown>)[keys[j] as string];
    }
    if (out !== undefined) out[key] = clean;
  }
  return out ?? value;
}

function scrubText(text: string, s: Scrub): string {
  let out = text;
  for (const secret of s.secrets) if (out.includes(secret)) out = out.split(secret).join(s.censor);
  return out;
}
