/** The one redaction function: every depth, keys too, encoded forms, and the value itself when clean. */
import { describe, expect, it } from 'vitest';
import { redact } from '../src/redact.js';

describe('redact', () => {
  const secret = 'p+ss/w=rd with space';

  it('replaces a secret in strings at any depth, in keys, and in its URL- and form-encoded forms', () => {
    const value = {
      a: `token ${secret}`,
      list: [{ deep: [encodeURIComponent(secret)] }, 'clean'],
      [secret]: 'as a key',
      form: `client_secret=${new URLSearchParams({ s: secret }).toString().slice(2)}`,
    };
    const out = redact(value, [secret]);
    expect(JSON.stringify(out)).not.toContain(secret);
    expect(JSON.stringify(out)).not.toContain(encodeURIComponent(secret));
    expect(out).toEqual({ a: 'token [redacted]', list: [{ deep: ['[redacted]'] }, 'clean'], '[redacted]': 'as a key', form: 'client_secret=[redacted]' });
    expect(value.a).toBe(`token ${secret}`); // the input is not changed
  });

  it('keeps the order of the fields before and after the one it changes', () => {
    const out = redact({ first: 1, second: `x${secret}`, third: 3 }, [secret]);
    expect(Object.entries(out)).toEqual([
      ['first', 1],
      ['second', 'x[redacted]'],
      ['third', 3],
    ]);
  });

  it('returns the value itself when it holds no secret, and ignores secrets under 4 characters', () => {
    const value = { ok: true, raw: { id: 'wamid.1', list: [1, 'two'] } };
    expect(redact(value, [secret, 'abc', undefined])).toBe(value);
    expect(redact('abc def', ['abc'])).toBe('abc def');
  });

  it('uses the secrets of each call, however often another list was used before (a rotated token)', () => {
    for (let i = 0; i < 40; i++) expect(redact(`tok-${i}-value`, [`tok-${i}-value`])).toBe('[redacted]');
    expect(redact('tok-1-value and tok-2-value', ['tok-2-value'])).toBe('tok-1-value and [redacted]');
  });
});
