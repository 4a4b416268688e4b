/** SQL fragments both dialects share, so that the two stores order and rank the same way. */
import { STATUS_RANK } from './rows.js';

/** An outbox row's place in its conversation: id order, except that an SMS fallback goes right after the row it stands in for. */
export const outboxRank = (t: string): string => `(COALESCE(${t}.fallback_of, ${t}.id) * 2 + CASE WHEN ${t}.fallback_of IS NULL THEN 0 ELSE 1 END)`;

/** A delivery status's rank ({@link STATUS_RANK}) as an SQL expression; 0 for NULL and unknown ones. */
export const statusRank = (expr: string): string =>
  `(CASE ${expr} ${Object.entries(STATUS_RANK)
    .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
    .join(' ')} ELSE 0 END)`;
