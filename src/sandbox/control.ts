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
import { ControlInputError, parseBody } from './control-input.js';

const endpoint = z.enum(['token', 'messaging', 'sms']);
const target = z.enum(['token', 'messaging', 'sms', 'any']);
const times = z.number().int().positive().optional();
const numbers = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const FailBody = z.strictObject({ endpoint: target, status: z.number().int().min(200).max(599), body: z.unknown().optional(), headers: z.record(z.string(), z.string()).optional(), times });
const RateLimitBody = z.strictObject({ endpoint: target, retryAfter: z.number().int().nonnegative().optional(), body: z.unknown().optional(), times });
const LatencyBody = z.strictObject({ ms: z.number().nonnegative(), endpoint: target.optional(), times });
const SmsErrorBody = z.strictObject({ code: z.number().int(), hint: z.string().optional(), message: z.string().optional(), status: z.number().int().min(200).max(599).optional(), times });
const RefuseBody = z.strictObject({ to: numbers, code: z.number().int().optional(), status: z.number().int().min(200).max(599).optional(), message: z.string().optional(), details: z.string().optional() });
const AllowBody = z.strictObject({ to: numbers });
const LifetimeBody = z.strictObject({ seconds: z.number().int().positive() });

/** The `/_sandbox/*` routes (relative: mount under `/_sandbox`). */
export function controlRouter(sandbox: Sandbox): Router {
  const router = express.Router();
  router.use(express.json({ limit: '1mb' }));
  router.get('/requests', json((req) => (typeof req.query['endpoint'] === 'string' ? sandbox.requestsTo(endpoint.parse(req.query['endpoint'])) : sandbox.requests)));
  router.get('/messages', json((req) => (typeof req.query['to'] === 'string' ? sandbox.messagesTo(req.query['to']) : sandbox.messages)));
  router.get('/stats', json(() => stats(sandbox)));
  router.get('/faults', json(() => sandbox.faults.snapshot()));
  router.delete('/faults', json(() => sandbox.clearFaults()));
  router.post('/faults/clear', json(() => sandbox.clearFaults()));
  router.post('/faults/fail', json((req) => failFrom(sandbox, parseBody(FailBody, req.body))));
  router.post('/faults/rate-limit', json((req) => rateLimitFrom(sandbox, parseBody(RateLimitBody, req.body))));
  router.post('/faults/latency', json((req) => latencyFrom(sandbox, parseBody(LatencyBody, req.body))));
  router.post('/faults/sms-error', json((req) => smsErrorFrom(sandbox, parseBody(SmsErrorBody, req.body))));
  router.post('/faults/refuse-interactive', json((req) => refuseFrom(sandbox, parseBody(RefuseBody, req.body))));
  router.post('/faults/allow-interactive', json((req) => sandbox.faults.allowInteractive(parseBody(AllowBody, req.body).to)));
  router.post('/tokens/expire', json(() => sandbox.expireTokens()));
  router.post('/tokens/lifetime', json((req) => sandbox.setTokenLifetime(parseBody(LifetimeBody, req.body).seconds)));
  router.post('/reset', json(() => sandbox.reset()));
  router.post('/deliver', json((req) => deliverFromJson(sandbox.deliver, req.body)));
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
