/** SQL fragments both dialects share, so that the two stores order and rank the same way. */
import { STATUS_RANK } from './rows.js';
import type { ConversationStatus } from './types.js';

/** A handoff that is still open (waiting for an agent, or claimed by one); at most one per conversation. */
export const OPEN_HANDOFF = `state IN ('waiting', 'claimed')`;

/** An outbox row's place in its conversation: id order, except that an SMS fallback goes right after the row it stands in for. */
export const outboxRank = (t: string): string => `(COALESCE(${t}.fallback_of, ${t}.id) * 2 + CASE WHEN ${t}.fallback_of IS NULL THEN 0 ELSE 1 END)`;

/** A delivery status's rank ({@link STATUS_RANK}) as an SQL expression; 0 for NULL and unknown ones. */
export const statusRank = (expr: string): string =>
  `(CASE ${expr} ${Object.entries(STATUS_RANK)
    .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
    .join(' ')} ELSE 0 END)`;

/** The filter of `Store.conversations`. */
export interface ConversationFilter {
  readonly botId?: string;
  readonly user?: string;
  readonly status?: ConversationStatus;
}

/**
 * The query of `Store.conversations` and its arguments: the given filter fields, ANDed, in id order.
 * @param placeholder The dialect's placeholder for the n-th argument (1-based): `?` or `$n`.
 */
export function conversationsQuery(filter: ConversationFilter, placeholder: (n: number) => string): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  for (const [col, v] of [
    ['bot_id', filter.botId],
    ['user_number', filter.user],
    ['status', filter.status],
  ] as const) {
    if (v !== undefined) {
      args.push(v);
      where.push(`${col} = ${placeholder(args.length)}`);
    }
  }
  return { sql: `SELECT * FROM conversations ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`, args };
}
