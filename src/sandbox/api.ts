/** The {@link Sandbox} object's shape, apart from how it is built. */
import type { Router } from 'express';
import type { Deliverer } from './deliver.js';
import type { Faults } from './faults.js';
import type { RecordedRequest, SandboxEndpoint, SandboxMessage, WebhookTarget } from './types.js';

/**
 * A fake provider, strict like the real one: the identity provider's token endpoint, the
 * interactive messaging endpoint and the SMS endpoint, with recording, fault injection and
 * simulated inbound traffic.
 */
export interface Sandbox {
  /** The provider routes and the `/_sandbox/*` control routes; mount it under any prefix. */
  readonly router: Router;
  /** The accepted client id. */
  readonly clientId: string;
  /** The accepted client secret. */
  readonly clientSecret: string;
  /** The business number (`from` of messages, `to` of inbound ones). */
  readonly sender: string;
  /** Every provider request since the last reset, oldest first. */
  readonly requests: readonly RecordedRequest[];
  /** Every accepted message since the last reset, oldest first. */
  readonly messages: readonly SandboxMessage[];
  /** Fault injection; see {@link Faults}. */
  readonly faults: Faults;
  /** Simulated inbound traffic to the configured webhook. */
  readonly deliver: Deliverer;
  /** Where {@link deliver} posts, if configured. */
  readonly webhook: WebhookTarget | undefined;
  /** Messages accepted for one number (both channels). */
  messagesTo(number: string): SandboxMessage[];
  /** Requests to one endpoint. */
  requestsTo(endpoint: SandboxEndpoint): RecordedRequest[];
  /** How many token requests arrived (granted or not) since the last reset. */
  tokenRequests(): number;
  /** How many tokens were granted since the sandbox was created. */
  tokensIssued(): number;
  /** Grants a token without an HTTP call (for tests that only need a valid bearer). */
  issueToken(): string;
  /** Expires every token issued so far (early expiry). */
  expireTokens(): void;
  /** Sets the lifetime of tokens issued from now on, in seconds. */
  setTokenLifetime(seconds: number): void;
  /** Removes every injected fault. */
  clearFaults(): void;
  /** Forgets recorded requests and messages and removes faults; issued tokens stay valid. */
  reset(): void;
  /** Calls `listener` for each accepted message; returns a function that stops it. */
  onMessage(listener: (message: SandboxMessage) => void): () => void;
  /** Calls `listener` for each answered provider request; returns a function that stops it. */
  onRequest(listener: (request: RecordedRequest) => void): () => void;
  /** Sets (or, with undefined, removes) the webhook {@link deliver} posts to. */
  setWebhook(target: WebhookTarget | undefined): void;
}
