/** What the endpoint handlers share: the sandbox's state, its settings and its clock. */
import type { Faults } from './faults.js';
import type { Recorder } from './recorder.js';
import type { TokenStore } from './tokens.js';
import type { IncomingRequest, Reply, SandboxClock } from './types.js';

/** The state and settings behind the provider endpoints. */
export interface EndpointDeps {
  readonly tokens: TokenStore;
  readonly faults: Faults;
  readonly recorder: Recorder;
  readonly clock: SandboxClock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Accepted senders; any when undefined. */
  readonly senders: ReadonlySet<string> | undefined;
  /** The next SMS mailing id. */
  readonly nextMailingId: () => number;
}

/** A provider endpoint: a request in, an answer out. */
export type EndpointHandler = (request: IncomingRequest, deps: EndpointDeps) => Reply;
