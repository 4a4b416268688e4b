/** A conversation's state, as stored (`a.b`, or a parallel state's JSON), read as dotted paths. */

/** The dotted state paths a conversation's state text names (`{"booking":"confirm"}` → `booking.confirm`). */
export function statePaths(state: string | null | undefined): string[] {
  if (state === null || state === undefined || state === '') return [];
  let value: unknown = state;
  if (state.startsWith('{')) {
    try {
      value = JSON.parse(state);
    } catch {
      return [state];
    }
  }
  const out: string[] = [];
  const walk = (v: unknown, prefix: string): void => {
    if (typeof v === 'string') out.push(prefix ? `${prefix}.${v}` : v);
    else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0 && prefix) out.push(prefix);
      for (const [k, sub] of entries) walk(sub, prefix ? `${prefix}.${k}` : k);
    }
  };
  walk(value, '');
  return out;
}
