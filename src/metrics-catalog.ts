/**
 * Every metric `GET /metrics` shows, declared once: its name, type, help text and labels. The
 * {@link Metrics} facade takes its help and labels from here (a name not declared does not compile),
 * and docs/reference/metrics.md is generated from it (`npm run docs:generate`).
 */

/** One metric. */
export interface MetricDeclaration {
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** The `# HELP` text. */
  readonly help: string;
  /** Its label names (every sample has exactly these). */
  readonly labels: readonly string[];
  /** The section of the reference it belongs to. */
  readonly group: 'conversations' | 'delivery' | 'webhook' | 'handoff' | 'versions' | 'store' | 'scale-out' | 'flows';
}

type Group = MetricDeclaration['group'];
const NONE = [] as const;
const counter = <const L extends readonly string[] = typeof NONE>(group: Group, help: string, labels?: L) => ({ type: 'counter', group, help, labels: labels ?? (NONE as unknown as L) }) as const;
const gauge = <const L extends readonly string[] = typeof NONE>(group: Group, help: string, labels?: L) => ({ type: 'gauge', group, help, labels: labels ?? (NONE as unknown as L) }) as const;
const histogram = <const L extends readonly string[]>(group: Group, help: string, labels: L) => ({ type: 'histogram', group, help, labels }) as const;

/** Colloquy's metrics by name. */
export const METRICS = {
  colloquy_inbound_total: counter('conversations', 'Inbounds received, by source and whether they were duplicates', ['source', 'duplicate']),
  colloquy_turns_total: counter('conversations', 'Turns run, by bot and outcome', ['bot', 'outcome']),
  colloquy_turn_seconds: histogram('conversations', 'Time to run and commit one turn', ['bot']),
  colloquy_turn_conflicts_total: counter('conversations', 'Turns retried after a concurrent save', ['bot']),
  colloquy_timers_fired_total: counter('conversations', 'Durable timers fired'),
  colloquy_conversations_expired_total: counter('conversations', 'Conversations expired after idling'),

  colloquy_sends_total: counter('delivery', 'Messages sent to the provider, by channel and outcome', ['channel', 'outcome']),
  colloquy_send_seconds: histogram('delivery', 'Time to deliver one message to the provider, retries included', ['channel']),
  colloquy_send_retries_total: counter('delivery', 'Outbox rows put back for a later attempt', ['channel']),
  colloquy_statuses_total: counter('delivery', 'Delivery statuses received, by status', ['status']),
  colloquy_fallbacks_total: counter('delivery', 'Messages sent by SMS because the interactive channel failed, by trigger', ['bot', 'trigger']),
  colloquy_window_total: counter(
    'delivery',
    'Free-form messages outside the 24-hour window, by what the window policy said (template: one per closed window, later ones reach the bot as send.failed; event; sms)',
    ['bot', 'action'],
  ),
  colloquy_read_receipts_total: counter('delivery', 'Read receipts (with the typing indicator) sent for users’ messages, by outcome (ok, failed)', ['outcome']),
  colloquy_token_requests_total: counter('delivery', 'OAuth token requests, by outcome', ['outcome']),
  colloquy_transport_retries_total: counter('delivery', 'HTTP retries inside the adapter, by endpoint', ['endpoint']),

  colloquy_webhook_requests_total: counter('webhook', 'Webhook requests, by route and outcome', ['route', 'outcome']),
  colloquy_webhook_seconds: histogram('webhook', 'Time to answer a webhook request', ['route']),

  colloquy_handoffs_started_total: counter('handoff', 'Handoffs to a person started, by bot and queue', ['bot', 'queue']),
  colloquy_handoffs_claimed_total: counter('handoff', 'Handoffs claimed by an agent, by bot', ['bot']),
  colloquy_handoffs_ended_total: counter('handoff', 'Handoffs released by an agent, by bot', ['bot']),
  colloquy_handoffs_timed_out_total: counter('handoff', 'Handoffs no agent claimed in time, by bot', ['bot']),
  colloquy_handoff_claims_expired_total: counter('handoff', 'Claims that went back to the queue, by bot and reason (idle: no agent activity for the claim idle time)', ['bot', 'reason']),
  colloquy_handoff_messages_total: counter('handoff', 'Messages during handoffs, by bot and who wrote them', ['bot', 'from']),
  colloquy_handoff_wait_seconds: histogram('handoff', 'Time a handoff waited for an agent (until claimed, released or timed out)', ['bot']),
  colloquy_handoff_events_total: counter('handoff', 'Handoff events POSTed to the helpdesk connector, by type and outcome', ['type', 'outcome']),

  colloquy_incompatible_conversations_total: counter('versions', 'Conversations whose state a bot version no longer has, by bot, version and policy', ['bot', 'version', 'policy']),
  colloquy_conversations_migrated_total: counter('versions', 'Conversations brought to a newer bot version by its migrations', ['bot', 'from', 'to']),

  colloquy_store_busy: gauge('store', 'Whether the database was busy (locked by another process) at the last health check'),
  colloquy_store_busy_total: counter('store', 'Store calls that found the database busy, by outcome (retried, or given up as unavailable)', ['outcome', 'code']),
  colloquy_store_unavailable_total: counter('store', 'Background work that found the store unavailable (a locked database) and was retried, by work', ['work']),
  colloquy_store_commits: gauge('store', 'Write transactions the SQLite store committed since it opened (each holds the writes issued together)'),
  colloquy_store_writes: gauge('store', 'Writes the SQLite store committed since it opened'),
  colloquy_store_writes_queued: gauge('store', 'Writes waiting for the next group commit'),
  colloquy_store_checkpoints: gauge('store', 'WAL checkpoints run off the event loop since the store opened, by kind', ['kind']),
  colloquy_store_checkpoint_hold_max_seconds: gauge('store', 'The longest time writes were held for a TRUNCATE checkpoint'),

  colloquy_flow_requests_total: counter(
    'flows',
    'Flow endpoint requests, by action (ping, INIT, BACK, data_exchange, error) and outcome (ok, replayed, screen_error, expired: 427, signature: 432, decrypt: 421, bad_request, unavailable)',
    ['action', 'outcome'],
  ),
  colloquy_flow_seconds: histogram('flows', 'Time to answer one Flow endpoint request, decryption and encryption included (Meta alerts past a p90 of 1 s)', ['action']),
  colloquy_flow_alerts_total: counter('flows', 'Alerts and status changes WhatsApp sent about the business’s flows (the `flows` webhook field), by event', ['event']),

  colloquy_lane_takeovers_total: counter('scale-out', 'Conversations taken over from another process whose lease ran out (or that gave them up)'),
  colloquy_lanes_held: gauge('scale-out', 'Conversations this process held at its last heartbeat'),
  colloquy_lanes_waiting: gauge('scale-out', 'Conversations with work waiting for a free lane (COLLOQUY_LANE_CONCURRENCY) at the last heartbeat'),
} as const satisfies Record<string, MetricDeclaration>;

/** A declared metric's name. */
export type MetricName = keyof typeof METRICS;
/** The labels a metric's samples carry: exactly its declared names. */
export type MetricLabels<N extends MetricName> = { readonly [K in (typeof METRICS)[N]['labels'][number]]: string };
/** The declared metrics of one type. */
export type MetricOf<T extends MetricDeclaration['type']> = { [N in MetricName]: (typeof METRICS)[N]['type'] extends T ? N : never }[MetricName];
