/** `createSandbox()`: wires the token store, faults, recorder, routes and deliverer together. */
import express from 'express';
import { ConfigError } from '../errors.js';
import type { Sandbox } from './api.js';
import { cloudSettings } from './cloud/config.js';
import { cloudRouter } from './cloud/router.js';
import { StatusQueue } from './cloud/statuses.js';
import { templateView } from './cloud/templates.js';
import type { CloudApiSettings, SandboxNumber } from './cloud/types.js';
import { Windows, inboundOf } from './cloud/window.js';
import { SANDBOX_BUSINESS_ACCOUNT_ID, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_PATHS, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER, SANDBOX_TOKEN_LIFETIME_SECONDS } from './constants.js';
import { controlRouter } from './control.js';
import { Deliverer } from './deliver.js';
import type { EndpointDeps } from './deps.js';
import { Faults } from './faults.js';
import { Recorder } from './recorder.js';
import { providerRouter } from './router.js';
import { TokenStore } from './tokens.js';
import type { SandboxClock, SandboxOptions, WebhookTarget } from './types.js';

const systemClock: SandboxClock = { now: () => Date.now() };
const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates a sandbox provider. Mount `sandbox.router` under a prefix (say `/sandbox`), then point
 * a client's `base_url` and `auth_url` at that prefix.
 *
 * @example
 * const sandbox = createSandbox({ tokenLifetimeSeconds: 60 });
 * app.use('/sandbox', sandbox.router);
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const clock = options.clock ?? systemClock;
  const deps = endpointDeps(options, clock);
  const sender = options.sender ?? SANDBOX_SENDER;
  const own: SandboxNumber = { phoneNumberId: options.phoneNumberId ?? SANDBOX_PHONE_NUMBER_ID, displayNumber: sender };
  const cloud = cloudSettings(options.cloudApi, own);
  const windows = new Windows(clock, cloud.windowMs, maxRecords(options.maxRecords));
  let webhook = options.webhook === undefined ? undefined : checkWebhook(options.webhook);
  const home = options.cloudApi?.numbers !== undefined && options.sender === undefined && options.phoneNumberId === undefined ? cloud.numbers[0]! : own;
  const deliver = deliverer(options, deps.recorder, clock, home, cloud, windows, () => webhook);
  const { recorder, tokens, faults } = deps;
  const statuses = new StatusQueue({
    post: (id, status, o) => deliver.status(id, status, o),
    hasWebhook: () => webhook !== undefined,
    enabled: cloud.statuses,
  });
  const numberId = (number: string | undefined): string => (number === undefined ? home.phoneNumberId : (numberOf(cloud, number)?.phoneNumberId ?? number));
  const sandbox: Sandbox = {
    router: express.Router(),
    clientId: deps.clientId,
    clientSecret: deps.clientSecret,
    sender,
    get requests() {
      return recorder.requests;
    },
    get messages() {
      return recorder.messages;
    },
    cloudApi: cloud,
    window: (user, number) => windows.state(user, numberId(number)),
    userWrote: (user, id, number) => windows.wrote({ user, id, numberId: numberId(number) }),
    windows: () => windows.all(),
    renderTemplate: (message) => templateView(cloud, message),
    reads: (user) => (user === undefined ? [...recorder.reads] : recorder.reads.filter((r) => r.user === user)),
    onRead: (listener) => recorder.onRead(listener),
    statusesPosted: () => statuses.idle(),
    faults,
    deliver,
    get webhook() {
      return webhook;
    },
    messagesTo: (number) => recorder.messagesTo(number),
    requestsTo: (endpoint) => recorder.requestsTo(endpoint),
    tokenRequests: () => recorder.count('token'),
    tokensIssued: () => tokens.issued,
    issueToken: () => tokens.issue().access_token,
    expireTokens: () => tokens.expireAll(),
    setTokenLifetime: (seconds) => tokens.setLifetime(seconds),
    clearFaults: () => faults.clear(),
    reset: () => {
      recorder.clear();
      faults.clear();
    },
    onMessage: (listener) => recorder.onMessage(listener),
    onRequest: (listener) => recorder.onRequest(listener),
    setWebhook: (target) => {
      webhook = target === undefined ? undefined : checkWebhook(target);
    },
  };
  if (options.controlRoutes !== false) sandbox.router.use(SANDBOX_PATHS.control, controlRouter(sandbox));
  sandbox.router.use(providerRouter(deps));
  sandbox.router.use(cloudRouter({ settings: cloud, windows, recorder, faults, clock, sleep: deps.sleep, statuses }));
  return sandbox;
}

function endpointDeps(options: SandboxOptions, clock: SandboxClock): EndpointDeps {
  let mailingId = 100000;
  return {
    tokens: new TokenStore(clock, options.tokenLifetimeSeconds ?? SANDBOX_TOKEN_LIFETIME_SECONDS),
    faults: new Faults(),
    recorder: new Recorder(maxRecords(options.maxRecords)),
    clock,
    sleep: options.sleep ?? realSleep,
    clientId: options.clientId ?? SANDBOX_CLIENT_ID,
    clientSecret: options.clientSecret ?? SANDBOX_CLIENT_SECRET,
    senders: options.senders === undefined ? undefined : new Set(options.senders),
    nextMailingId: () => ++mailingId,
  };
}

/** A Cloud API number by display number or `phone_number_id`. */
function numberOf(cloud: CloudApiSettings, number: string): SandboxNumber | undefined {
  return cloud.numbers.find((n) => n.displayNumber === number) ?? cloud.numbers.find((n) => n.phoneNumberId === number);
}

function deliverer(
  options: SandboxOptions,
  recorder: Recorder,
  clock: SandboxClock,
  home: SandboxNumber,
  cloud: CloudApiSettings,
  windows: Windows,
  target: () => WebhookTarget | undefined,
): Deliverer {
  return new Deliverer({
    target,
    clock,
    business: {
      displayPhoneNumber: home.displayNumber,
      phoneNumberId: home.phoneNumberId,
      businessAccountId: options.businessAccountId ?? SANDBOX_BUSINESS_ACCOUNT_ID,
    },
    recipientOf: (id) => recorder.messageById(id)?.to,
    lastInteractiveTo: (number) => recorder.messagesTo(number).findLast((m) => m.channel === 'interactive' || (m.channel === 'cloud-api' && m.type.startsWith('interactive')))?.providerId,
    lastTemplateTo: (number) => recorder.messagesTo(number).findLast((m) => m.channel === 'cloud-api' && m.type === 'template')?.providerId,
    senderOf: (id) => {
      const m = recorder.messageById(id);
      return m?.channel === 'interactive' || m?.channel === 'cloud-api' ? m.from : undefined;
    },
    numberOf: (number) => numberOf(cloud, number),
    observe: (payload) => {
      for (const m of inboundOf(payload)) windows.wrote(m);
    },
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.deliveryTimeoutMs ?? 10_000,
  });
}

function maxRecords(n: number | undefined): number {
  if (n === undefined) return 10_000;
  if (!Number.isInteger(n) || n < 1) throw new ConfigError('maxRecords', `must be a positive whole number (got ${n})`);
  return n;
}

function checkWebhook(target: WebhookTarget): WebhookTarget {
  for (const [name, url] of [
    ['webhook.url', target.url],
    ['webhook.smsUrl', target.smsUrl],
  ] as const) {
    if (url === undefined) continue;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(name, `must be an absolute http(s) URL (got "${url}")`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL (got "${url}")`);
  }
  return target;
}
