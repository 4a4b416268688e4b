/**
 * The sandbox's own control routes (`/_sandbox/*`, JSON), for a sandbox running standalone:
 * inspect what arrived, inject and clear faults, expire tokens, reset, deliver inbound traffic.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { ColloquyError, ConfigError } from '../errors.js';
import { toIssues } from '../messages/validate.js';
import type { Sandbox } from './api.js';
import { deliverFromJson } from './control-deliver.js';
import { controlIndex, type ControlRoute } from './control-index.js';
import { ControlInputError, parseBody } from './control-input.js';

const endpoint = z.enum(['token', 'messaging', 'sms', 'cloud-api']);
const target = z.enum(['token', 'messaging', 'sms', 'cloud-api', 'any']);
const times = z.number().int().positive().optional();
const numbers = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const FailBody = z.strictObject({ endpoint: target, status: z.number().int().min(200).max(599), body: z.unknown().optional(), headers: z.record(z.string(), z.string()).optional(), times });
const RateLimitBody = z.strictObject({ endpoint: target, retryAfter: z.number().int().nonnegative().optional(), body: z.unknown().optional(), times });
const LatencyBody = z.strictObject({ ms: z.number().nonnegative(), endpoint: target.optional(), times });
const SmsErrorBody = z.strictObject({ code: z.number().int(), hint: z.string().optional(), message: z.string().optional(), status: z.number().int().min(200).max(599).optional(), times });
const RefuseBody = z.strictObject({
  to: numbers,
  code: z.number().int().optional(),
  status: z.number().int().min(200).max(599).optional(),
  message: z.string().optional(),
  details: z.string().optional(),
});
const AllowBody = z.strictObject({ to: numbers });
const CloudErrorBody = z.strictObject({
  code: z.number().int().positive(),
  retryAfter: z.number().int().nonnegative().optional(),
  status: z.number().int().min(200).max(599).optional(),
  message: z.string().optional(),
  details: z.string().optional(),
  to: numbers.optional(),
  delivery: z.enum(['sync', 'status']).optional(),
  times,
});
const WindowQuery = z.strictObject({
  user: z
    .string()
    .regex(/^[0-9]{6,20}$/, 'must be digits only')
    .optional(),
  number: z.string().min(1).optional(),
});
const LifetimeBody = z.strictObject({ seconds: z.number().int().positive() });

function controlRoutes(sandbox: Sandbox): ControlRoute[] {
  const route = (method: ControlRoute['method'], path: string, does: string, action: ControlRoute['action'], body?: unknown): ControlRoute => ({
    method,
    path,
    does,
    action,
    ...(body !== undefined && { body }),
  });
  return [
    route('GET', '/requests', 'every provider request since the last reset (?endpoint=token|messaging|sms|cloud-api)', (req) =>
      typeof req.query['endpoint'] === 'string' ? sandbox.requestsTo(endpoint.parse(req.query['endpoint'])) : sandbox.requests,
    ),
    route('GET', '/messages', 'every accepted message (?to=<number>)', (req) => (typeof req.query['to'] === 'string' ? sandbox.messagesTo(req.query['to']) : sandbox.messages)),
    route('GET', '/cloud', 'the Cloud API mode: token, numbers, templates, window length', () => sandbox.cloudApi),
    route('GET', '/window', "every user's 24-hour window, or one (?user=<number>&number=<phone_number_id or display number>)", (req) => {
      const q = parseBody(WindowQuery, req.query);
      return q.user === undefined ? sandbox.windows() : sandbox.window(q.user, q.number);
    }),
    route('GET', '/reads', 'the read receipts the bot sent (?user=<number>)', (req) => sandbox.reads(typeof req.query['user'] === 'string' ? req.query['user'] : undefined)),
    route('GET', '/stats', 'counts of requests, messages, token requests and tokens issued', () => stats(sandbox)),
    route('GET', '/faults', 'the faults waiting to fire', () => sandbox.faults.snapshot()),
    route('DELETE', '/faults', 'removes every fault', () => sandbox.clearFaults()),
    route('POST', '/faults/clear', 'removes every fault', () => sandbox.clearFaults()),
    route('POST', '/faults/fail', 'answers the next calls to an endpoint (token, messaging, sms or any) with a status', (req) => failFrom(sandbox, parseBody(FailBody, req.body)), {
      endpoint: 'messaging',
      status: 500,
      times: 2,
    }),
    route('POST', '/faults/rate-limit', 'answers the next calls with 429 and Retry-After', (req) => rateLimitFrom(sandbox, parseBody(RateLimitBody, req.body)), {
      endpoint: 'any',
      retryAfter: 3,
      times: 1,
    }),
    route('POST', '/faults/latency', 'delays the next calls', (req) => latencyFrom(sandbox, parseBody(LatencyBody, req.body)), { ms: 2000, endpoint: 'messaging', times: 1 }),
    route('POST', '/faults/sms-error', "answers the next SMS with one of the provider's error codes", (req) => smsErrorFrom(sandbox, parseBody(SmsErrorBody, req.body)), { code: 15, times: 1 }),
    route('POST', '/faults/refuse-interactive', 'refuses WhatsApp messages to these numbers (the SMS fallback takes over)', (req) => refuseFrom(sandbox, parseBody(RefuseBody, req.body)), {
      to: '15551234567',
    }),
    route('POST', '/faults/allow-interactive', 'accepts WhatsApp messages to these numbers again', (req) => sandbox.faults.allowInteractive(parseBody(AllowBody, req.body).to), { to: '15551234567' }),
    route(
      'POST',
      '/faults/cloud-error',
      'answers the next Cloud API messages with a Meta error code (sync, or as a failed status)',
      (req) => cloudErrorFrom(sandbox, parseBody(CloudErrorBody, req.body)),
      {
        code: 130429,
        retryAfter: 2,
        times: 1,
      },
    ),
    route('POST', '/tokens/expire', 'expires every token issued so far', () => sandbox.expireTokens()),
    route('POST', '/tokens/lifetime', 'sets the lifetime of new tokens, in seconds', (req) => sandbox.setTokenLifetime(parseBody(LifetimeBody, req.body).seconds), { seconds: 600 }),
    route('POST', '/reset', 'forgets requests and messages and removes faults', () => sandbox.reset()),
    route(
      'POST',
      '/deliver',
      'a simulated user writes to the webhook: kind text, button_reply, list_reply, flow_reply, template_reply, image, status, sms or payload',
      (req) => deliverFromJson(sandbox.deliver, req.body),
      { kind: 'text', from: '15551234567', text: 'hi' },
    ),
  ];
}

/** The `/_sandbox/*` routes (relative: mount under `/_sandbox`), with an index at `/`. */
export function controlRouter(sandbox: Sandbox): Router {
  const router = express.Router();
  const routes = controlRoutes(sandbox);
  router.use(express.json({ limit: '1mb' }));
  router.get('/', (req, res) => controlIndex(sandbox, routes, req, res));
  for (const r of routes) {
    const method = r.method === 'GET' ? 'get' : r.method === 'POST' ? 'post' : 'delete';
    router[method](r.path, json(r.action));
  }
  router.use(controlErrors);
  return router;
}

/** Runs a control action and answers its result as JSON (`{ok: true}` when it returns nothing). */
function json(action: (req: Request) => unknown): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    const result = await action(req);
    res.status(200).json(result === undefined ? { ok: true } : result);
  };
}

function stats(sandbox: Sandbox): Record<string, number> {
  return { requests: sandbox.requests.length, messages: sandbox.messages.length, tokenRequests: sandbox.tokenRequests(), tokensIssued: sandbox.tokensIssued() };
}

// The zod output types carry `| undefined` on optional keys; the fault API takes them as they are.
function failFrom(sandbox: Sandbox, b: z.infer<typeof FailBody>): void {
  sandbox.faults.fail(b.endpoint, { status: b.status, body: b.body, headers: b.headers, times: b.times });
}

function rateLimitFrom(sandbox: Sandbox, b: z.infer<typeof RateLimitBody>): void {
  sandbox.faults.rateLimit(b.endpoint, { retryAfter: b.retryAfter, body: b.body, times: b.times });
}

function latencyFrom(sandbox: Sandbox, b: z.infer<typeof LatencyBody>): void {
  sandbox.faults.latency(b.ms, { endpoint: b.endpoint, times: b.times });
}

function smsErrorFrom(sandbox: Sandbox, b: z.infer<typeof SmsErrorBody>): void {
  sandbox.faults.smsError(b.code, { hint: b.hint, message: b.message, status: b.status, times: b.times });
}

function refuseFrom(sandbox: Sandbox, b: z.infer<typeof RefuseBody>): void {
  sandbox.faults.refuseInteractive(b.to, { code: b.code, status: b.status, message: b.message, details: b.details });
}

function cloudErrorFrom(sandbox: Sandbox, b: z.infer<typeof CloudErrorBody>): void {
  sandbox.faults.cloudError(b.code, { retryAfter: b.retryAfter, status: b.status, message: b.message, details: b.details, to: b.to, delivery: b.delivery, times: b.times });
}

function controlErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (err instanceof ControlInputError) {
    res.status(400).json({ error: { message: err.message, issues: err.issues } });
  } else if (err instanceof ConfigError) {
    res.status(400).json({ error: { message: err.message } });
  } else if (err instanceof z.ZodError) {
    res.status(400).json({ error: { message: 'Invalid control request', issues: toIssues(err) } });
  } else if (err instanceof ColloquyError && err.code === 'sandbox_delivery') {
    res.status(502).json({ error: { message: err.message } });
  } else if (typeof err === 'object' && err !== null && 'status' in err && Number(err.status) >= 400 && Number(err.status) < 500) {
    res.status(Number(err.status)).json({ error: { message: err instanceof Error ? err.message : 'Bad request' } });
  } else {
    next(err);
  }
}
