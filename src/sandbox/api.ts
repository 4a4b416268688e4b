/** The {@link Sandbox} object's shape, apart from how it is built. */
import type { Router } from 'express';
import type { Deliverer } from './deliver.js';
import type { Faults } from './faults.js';
import type { RenderedTemplate } from './cloud/templates.js';
import type { CloudApiSettings, WindowState } from './cloud/types.js';
import type { AcceptedCloud, AcceptedRead, RecordedRequest, SandboxEndpoint, SandboxMessage, WebhookTarget } from './types.js';

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
  /** The Cloud API mode as configured: token, numbers, templates, window length, how the window refuses. */
  readonly cloudApi: CloudApiSettings;
  /**
   * The 24-hour window between `user` and a business number (a `phone_number_id` or display
   * number; default the sandbox's own), by the sandbox's clock.
   */
  window(user: string, number?: string): WindowState;
  /**
   * Notes that `user` wrote message `id` to `number` (phone_number_id or display number; default the
   * home number) now, as a delivered message does: for a harness that hands users' messages to the
   * runtime itself. The window opens, and a read receipt of `id` names the user.
   */
  userWrote(user: string, id: string, number?: string): void;
  /** A template message as the user sees it, filled from the template the sandbox knows; undefined for other messages. */
  renderTemplate(message: AcceptedCloud): RenderedTemplate | undefined;
  /** Every user's window with every number they wrote to. */
  windows(): (WindowState & { readonly user: string; readonly numberId: string })[];
  /** The read receipts accepted on the Cloud API endpoint, oldest first; only `user`'s when given. */
  reads(user?: string): AcceptedRead[];
  /** Calls `listener` for each accepted read receipt; returns a function that stops it. */
  onRead(listener: (read: AcceptedRead) => void): () => void;
  /** Resolves once every status queued so far (`sent`, `delivered`, `failed`) was posted to the webhook. */
  statusesPosted(): Promise<void>;
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
  /** Forgets recorded requests, messages and read receipts and removes faults; issued tokens and the users' windows stay. */
  reset(): void;
  /** Calls `listener` for each accepted message; returns a function that stops it. */
  onMessage(listener: (message: SandboxMessage) => void): () => void;
  /** Calls `listener` for each answered provider request; returns a function that stops it. */
  onRequest(listener: (request: RecordedRequest) => void): () => void;
  /** Sets (or, with undefined, removes) the webhook {@link deliver} posts to. */
  setWebhook(target: WebhookTarget | undefined): void;
}
