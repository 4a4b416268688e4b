/**
 * What a server child of the bench (bench/roles.ts, bench/flow-baseline.ts) reports about itself,
 * in a file of its own so that a role living outside roles.ts can report it without an import cycle.
 */

/** What a server child (Colloquy or the baseline) reports. */
export interface ServerStats {
  readonly tokenRequests: number;
  readonly turnsOk: number;
  readonly turnsError: number;
  readonly sendsAccepted: number;
  /** Read receipts the server sent (Colloquy on the Cloud API), accepted and failed. */
  readonly readReceipts?: number;
  readonly readReceiptsFailed?: number;
  /** COLLOQUY_SEND_RATE of the server, when set. */
  readonly sendRate?: number;
  readonly webhookRequests: number;
  readonly warnings: number;
  readonly errors: number;
  readonly logged: string[];
  /** SQLite's journal mode, `postgres`, or `none` (the baseline). */
  readonly journalMode: string;
  /** The store's class name (`SqliteStore`, …). */
  readonly storeClass: string;
  readonly egress: { hosts: string[]; lookups: string[] };
  readonly peakRssMb: number;
  readonly rssMb: number;
  /** With `traceStore`: calls and milliseconds per store method. */
  readonly storeTime?: Record<string, { calls: number; ms: number; rows: number }>;
}
