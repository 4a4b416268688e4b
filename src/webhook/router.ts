/**
 * `createWebhookRouter()`: the Express router in front of the runtime (provider.md §2). It checks
 * the signature over the raw bytes, validates the whole payload, routes each message to its bot by
 * number (its phone_number_id, else its display number), commits every inbound to the inbox and only then answers 200; the turns run afterwards.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Inbound, Runtime } from '../conversation/runtime.js';
import { ColloquyError, ConfigError, isStoreUnavailable } from '../errors.js';
import { errorInfo } from '../log.js';
import { cloudBatch, commitBatch, smsBatch, type Batch } from './batch.js';
import type { NumbersConfig } from '../numbers/types.js';
import { DEFAULT_MAX_BODY_BYTES, parseJson, rawBodyReader, requireJson } from './body.js';
import { WebhookError, sendError } from './errors.js';
import { reportFlowAlerts } from './flow-alerts.js';
import { handshake } from './handshake.js';
import { BotNumbers } from './numbers.js';
import { WebhookSecrets } from './secrets.js';

/** What {@link createWebhookRouter} takes. */
export interface WebhookRouterOptions {
  /** The runtime inbounds are committed to (its bots, metrics and logger are used too). */
  readonly runtime: Runtime;
  /** The number of bots that set no `sender` of their own; inbounds are routed by it. */
  readonly defaultSender: string;
  /**
   * The default HMAC key of `X-Hub-Signature-256` (COLLOQUY_WEBHOOK_SECRET): it signs the numbers
   * with no `appSecret` of their own. With neither this nor any number's `appSecret`, signatures
   * are not checked.
   */
  readonly secret?: string | undefined;
  /**
   * The numbers file (COLLOQUY_NUMBERS_FILE): inbounds to its numbers go to their bots (by
   * phone_number_id, then display number), and each number's webhooks must be signed with its
   * own `appSecret`, if it has one.
   */
  readonly numbers?: NumbersConfig | undefined;
  /** The token of the GET handshake; unset, the handshake is refused (403). */
  readonly verifyToken?: string | undefined;
  /** The largest body accepted, in bytes (default 1 MiB); larger ones get 413. */
  readonly maxBodyBytes?: number | undefined;
  /** Told of each valid request's inbounds just before they are stored (the sandbox learns that users wrote). */
  readonly onInbound?: ((inbounds: readonly Inbound[]) => void) | undefined;
}

/** Which route a request took, for metrics and logs. */
type Route = 'webhook' | 'sms' | 'handshake';

interface Context {
  readonly runtime: Runtime;
  readonly numbers: BotNumbers;
  readonly secrets: WebhookSecrets;
  readonly verifyToken: string | undefined;
  readonly readBody: (req: Request, res: Response) => Promise<Buffer>;
  readonly onInbound: ((inbounds: readonly Inbound[]) => void) | undefined;
}

/**
 * Creates the webhook router: `POST /webhook` (Cloud API envelope), `GET /webhook` (verification
 * handshake) and `POST /webhook/sms` (inbound SMS). Mount it before any body parser, since the
 * signature is checked over the raw body. Throws ConfigError when two bots share a number, or the
 * numbers file names a bot that is not served.
 *
 * @example
 * app.use(createWebhookRouter({ runtime, defaultSender: '15550000001', secret: process.env.COLLOQUY_WEBHOOK_SECRET }));
 */
export function createWebhookRouter(options: WebhookRouterOptions): Router {
  const ctx = contextOf(options);
  const router = express.Router();
  router.get('/webhook', (req, res) =>
    instrumented(ctx, 'handshake', res, async () => {
      const challenge = handshake(req, ctx.verifyToken); // a refusal is a JSON error, not text/plain
      res.set('X-Content-Type-Options', 'nosniff').type('text/plain').send(challenge);
    }),
  );
  router.post('/webhook/sms', (req, res) => instrumented(ctx, 'sms', res, () => receive(ctx, 'sms', req, res, smsBatch)));
  router.post('/webhook', (req, res) => instrumented(ctx, 'webhook', res, () => receive(ctx, 'webhook', req, res, cloudBatch)));
  return router;
}

function contextOf(o: WebhookRouterOptions): Context {
  if (o.secret === '') throw new ConfigError('secret', 'must not be empty (leave it unset to skip signature checks)');
  const limit = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(limit) || limit < 1) throw new ConfigError('maxBodyBytes', `must be a positive whole number of bytes (got ${limit})`);
  return {
    runtime: o.runtime,
    numbers: new BotNumbers(o.runtime.botList, o.defaultSender, o.numbers),
    secrets: new WebhookSecrets(o.secret, o.numbers),
    verifyToken: o.verifyToken,
    readBody: rawBodyReader(limit),
    onInbound: o.onInbound,
  };
}

/** Reads, checks and validates the whole request, then commits it and answers. */
async function receive(ctx: Context, route: Route, req: Request, res: Response, toBatch: (json: unknown, numbers: BotNumbers) => Batch): Promise<void> {
  requireJson(req);
  const raw = await ctx.readBody(req, res);
  const matched = ctx.secrets.checked ? ctx.secrets.verify(req, raw) : undefined;
  const batch = toBatch(parseJson(raw), ctx.numbers);
  if (matched !== undefined) ctx.secrets.requireOwners(matched, batch.numbers);
  if (matched !== undefined && route === 'sms') ctx.secrets.requireDefault(matched);
  // Before the commit: the turn it starts may answer at once.
  ctx.onInbound?.(batch.inbounds);
  const { logger, metrics } = ctx.runtime;
  const result = await commitBatch(ctx.runtime, batch).catch((err: unknown) => {
    // Refused items aside, the request was taken (its other items stored): its alerts were received.
    if (err instanceof WebhookError && err.code === 'unstorable') reportFlowAlerts(batch.flowAlerts, logger, metrics);
    throw err instanceof WebhookError ? err : storeError(err);
  });
  // After the commit, so a request refused for a busy store and delivered again is reported once.
  reportFlowAlerts(batch.flowAlerts, logger, metrics);
  const alerts = batch.flowAlerts.length;
  logger.debug({ route, ...result, ...(alerts > 0 && { flowAlerts: alerts }) }, 'webhook committed');
  answerOk(res, { ok: true, ...result, ...(alerts > 0 && { flowAlerts: alerts }) });
}

/**
 * Answers 200 with a JSON body as `res.json` would, minus its ETag: a hash of every body that no
 * webhook sender revalidates (a POST is never answered 304), and about a tenth of a request's time.
 */
function answerOk(res: Response, body: object): void {
  const app = res.app;
  // An application that formats its JSON its own way (spaces, a replacer, escaping) gets it here too.
  if (app.get('json spaces') !== undefined || app.get('json replacer') !== undefined || app.get('json escape')) {
    res.status(200).json(body);
    return;
  }
  const text = JSON.stringify(body);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function storeError(err: unknown): WebhookError {
  if (err instanceof ColloquyError && err.code === 'stopped') {
    return new WebhookError(503, 'unavailable', 'The runtime is not accepting messages right now; deliver again later', undefined, { cause: err });
  }
  if (isStoreUnavailable(err)) {
    return new WebhookError(503, 'store_unavailable', 'The database is busy right now; deliver again later', undefined, { cause: err });
  }
  return new WebhookError(500, 'internal', 'The inbound could not be stored; deliver again later', undefined, { cause: err });
}

/** Runs a route: answers refusals as JSON, counts the outcome and times it. */
async function instrumented(ctx: Context, route: Route, res: Response, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  let outcome = 'ok';
  try {
    await work();
  } catch (err) {
    const e = err instanceof WebhookError ? err : new WebhookError(500, 'internal', 'The webhook failed; deliver again later', undefined, { cause: err });
    outcome = e.code;
    report(ctx, route, e);
    if (!res.headersSent) sendError(res, e);
  } finally {
    const { metrics } = ctx.runtime;
    metrics.inc('colloquy_webhook_requests_total', { route, outcome });
    metrics.observe('colloquy_webhook_seconds', { route }, (performance.now() - started) / 1000);
  }
}

function report(ctx: Context, route: Route, e: WebhookError): void {
  const { logger } = ctx.runtime;
  if (e.status === 503)
    logger.warn({ route, code: e.code, reason: errorInfo(e.cause ?? e).message }, e.message); // a later delivery gets through
  else if (e.status >= 500 || e.code === 'unstorable') logger.error({ route, status: e.status, code: e.code, err: errorInfo(e.cause ?? e) }, e.message);
  else logger.warn({ route, status: e.status, code: e.code, reason: e.message }, 'webhook request refused');
}
