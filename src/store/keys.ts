/**
 * The store's leaf types: what both the port (`types.ts`) and its handoff part
 * (`handoff-types.ts`) are written in terms of, so neither imports the other.
 */

/** A conversation is one user's run of one bot. */
export interface ConversationKey {
  readonly botId: string;
  readonly user: string;
}

/** The channel a conversation's messages go by: `sms` while they go by SMS. */
export type ChannelName = 'interactive' | 'sms';

/** A message a turn emitted, to commit with the turn. */
export interface NewOutbound {
  readonly kind: string;
  /** The Message, as JSON. */
  readonly message: unknown;
  readonly channel: ChannelName;
  /** The provider request body. */
  readonly request: unknown;
  /** For an SMS fallback: the outbox row it stands in for. */
  readonly fallbackOf?: number | undefined;
}
