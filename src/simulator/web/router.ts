/**
 * The web simulator's Express router: the page and its assets, and the JSON API under `/api`
 * (`bots`, `state`, `events`, `text`, `tap`, `flow`, `sms`, and a live
 * flow's `flow/open`, `flow/submit`, `flow/back`). Mount it under any prefix.
 */
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { Runtime } from '../../conversation/runtime.js';
import { errorInfo } from '../../log.js';
import type { Sandbox } from '../../sandbox/api.js';
import type { Store } from '../../store/types.js';
import { botInfos, type BotInfo } from './bots.js';
import { ViewHub } from './hub.js';
import { checkPageDir, PAGE_DIR, pageHtml } from './page.js';
import { FlowInput, SmsInput, TapInput, TextInput, UserSender, type Sent } from './send.js';
import type { FlowEndpointAccess } from '../chat-flow.js';
import { LiveBackInput, LiveFlowRefusal, LiveFlows, LiveOpenInput, LiveSubmitInput, type LiveAnswer } from './live-flows.js';
import { buildView, usersOf } from './view.js';

/** What {@link createSimulatorRouter} takes. */
export interface SimulatorOptions {
  readonly sandbox: Sandbox;
  readonly runtime: Runtime;
  readonly store: Store;
  /** The number of bots that set no `sender` (the configured sender, or the sandbox's). */
  readonly defaultSender: string;
  /** How often open pages are refreshed without a reason, in ms (default 1000). */
  readonly tickMs?: number | undefined;
  /** The server's Flow endpoint, which the page's live flows are walked through (as WhatsApp would); without it they cannot open. */
  readonly flows?: (() => FlowEndpointAccess) | undefined;
}

/** A refusal the API answers as JSON. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

const KeyQuery = z.object({ bot: z.string().min(1), user: z.string().regex(/^[0-9]{6,20}$/, 'must be 6 to 20 digits') });

/** Creates the simulator's router; it listens to the sandbox for as long as the process lives. */
export function createSimulatorRouter(o: SimulatorOptions): Router {
  checkPageDir();
  const bots = botInfos(o.runtime.botList, o.defaultSender);
  const botOf = (id: string): BotInfo => bots.find((b) => b.id === id) ?? fail(404, 'unknown_bot', `no bot "${id}" is served (served: ${bots.map((b) => b.id).join(', ')})`);
  const hub = new ViewHub((bot, user) => buildView(o.store, o.sandbox, botOf(bot), user, Date.now(), o.runtime.clock.now()), o.tickMs);
  o.sandbox.onMessage((m) => hub.poke(m.to));
  // An agent claimed, wrote or released (through the agents' API or the console), or a handoff opened or timed out.
  o.runtime.handoffs.onChange(() => hub.poke());
  // A token, or a Cloud API read receipt (which names a message, not a user), may concern anybody.
  o.sandbox.onRequest((r) => {
    const users = usersOf(r);
    if (r.endpoint === 'token' || (r.endpoint === 'cloud-api' && users.length === 0)) hub.poke();
    else users.forEach((u) => hub.poke(u));
  });
  const sender = new UserSender(o.sandbox);

  const router = express.Router();
  router.get('/', (req, res) => {
    page(res).type('html').send(pageHtml(req.baseUrl));
  });
  router.use(
    '/assets',
    express.static(PAGE_DIR, {
      index: false,
      dotfiles: 'ignore',
      redirect: false,
      setHeaders: (res) => void res.set('Cache-Control', 'no-cache').set('X-Content-Type-Options', 'nosniff'),
    }),
  );
  // `signed`: whether the sandbox signs what it posts to the webhook (COLLOQUY_WEBHOOK_SECRET is set).
  router.get('/api/bots', (_req, res) => void api(res).json({ bots, signed: Boolean(o.sandbox.webhook?.secret) }));
  router.get(
    '/api/state',
    handle(async (req, res) => {
      const q = parse(KeyQuery, req.query);
      api(res).json(await buildView(o.store, o.sandbox, botOf(q.bot), q.user, Date.now(), o.runtime.clock.now()));
    }),
  );
  router.get(
    '/api/events',
    handle(async (req, res) => events(hub, parse(KeyQuery, req.query), botOf, req, res)),
  );
  const post = <T extends { bot: string; user: string }>(path: string, schema: z.ZodType<T>, send: (bot: BotInfo, input: T) => Promise<Sent>): void => {
    router.post(
      path,
      express.json({ limit: '256kb' }),
      handle(async (req, res) => {
        if (!req.is('application/json')) throw new ApiError(415, 'unsupported_media_type', 'send JSON (Content-Type: application/json)');
        const input = parse(schema, req.body);
        const sent = await send(botOf(input.bot), input).catch((err: unknown) => fail(502, 'delivery_failed', errorInfo(err).message));
        void o.runtime.idle().then(
          () => hub.poke(input.user),
          () => undefined,
        );
        hub.poke(input.user);
        const { status, body } = sent.delivery;
        if (!sent.delivery.ok) throw new ApiError(502, 'webhook_refused', `the webhook answered ${status}`, { status, body });
        api(res).json({ ok: true, id: sent.id, webhook: { status, body: safeJson(body) } });
      }),
    );
  };
  post('/api/text', TextInput, (bot, i) => sender.text(bot, i));
  post('/api/tap', TapInput, (bot, i) => sender.tap(bot, i));
  post('/api/flow', FlowInput, (bot, i) => sender.flow(bot, i));
  post('/api/sms', SmsInput, (bot, i) => sender.sms(bot, i));
  const live = new LiveFlows(o.flows, sender);
  const liveRoute = <T extends { bot: string; user: string }>(path: string, schema: z.ZodType<T>, act: (bot: BotInfo, input: T) => LiveAnswer | Promise<LiveAnswer>): void => {
    router.post(
      path,
      express.json({ limit: '256kb' }),
      handle(async (req, res) => {
        if (!req.is('application/json')) throw new ApiError(415, 'unsupported_media_type', 'send JSON (Content-Type: application/json)');
        const input = parse(schema, req.body);
        let answer: LiveAnswer;
        try {
          answer = await act(botOf(input.bot), input);
        } catch (err) {
          if (err instanceof LiveFlowRefusal) throw new ApiError(err.status, err.code, err.message);
          throw new ApiError(502, 'flow_endpoint_failed', errorInfo(err).message);
        }
        const { delivered } = answer;
        if (delivered) {
          void o.runtime.idle().then(
            () => hub.poke(input.user),
            () => undefined,
          );
          hub.poke(input.user);
        }
        api(res).json({ step: answer.step, ...(delivered && { reply: { id: delivered.id, webhook: { status: delivered.delivery.status, ok: delivered.delivery.ok } } }) });
      }),
    );
  };
  liveRoute('/api/flow/open', LiveOpenInput, (bot, i) => live.open(bot, i));
  liveRoute('/api/flow/submit', LiveSubmitInput, (bot, i) => live.submit(bot, i));
  liveRoute('/api/flow/back', LiveBackInput, (bot, i) => live.back(bot, i));
  router.use('/api', (_req, res) => void api(res).status(404).json({ error: 'not_found', message: 'no such simulator API route' }));
  return router;
}

/** `GET /api/events`: Server-Sent Events, one `view` event per change, until the page goes. */
async function events(hub: ViewHub, q: z.infer<typeof KeyQuery>, botOf: (id: string) => BotInfo, req: Request, res: Response): Promise<void> {
  botOf(q.bot);
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'close' });
  res.write('retry: 1000\n\n');
  const stop = hub.watch(
    q.bot,
    q.user,
    (json) => res.write(`event: view\ndata: ${json}\n\n`),
    () => end(),
  );
  // The HTTP server waits for open streams when it closes: end ours as soon as it stops listening.
  const server = (req.socket as { server?: { listening?: boolean } }).server;
  let beats = 0;
  const beat = setInterval(() => {
    if (server?.listening === false) end();
    else if (++beats % 60 === 0) res.write(': ping\n\n');
  }, 250);
  beat.unref();
  function end(): void {
    clearInterval(beat);
    stop();
    if (!res.writableEnded) res.end();
  }
  res.on('close', end);
}

function handle(fn: (req: Request, res: Response) => Promise<void>): (req: Request, res: Response) => void {
  return (req, res) => {
    fn(req, res).catch((err: unknown) => {
      const e = err instanceof ApiError ? err : new ApiError(500, 'internal', errorInfo(err).message);
      if (res.headersSent) return void res.end();
      api(res)
        .status(e.status)
        .json({ error: e.code, message: e.message, ...(e.details !== undefined && { details: e.details }) });
    });
  };
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  throw new ApiError(400, 'bad_request', issues.map((i) => `${i.path || 'body'}: ${i.message}`).join('; '), issues);
}

function fail(status: number, code: string, message: string): never {
  throw new ApiError(status, code, message);
}

function api(res: Response): Response {
  return res.set('Cache-Control', 'no-store').set('X-Content-Type-Options', 'nosniff');
}

function page(res: Response): Response {
  return api(res)
    .set(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' https: data:",
        "media-src 'self' https:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    )
    .set('Referrer-Policy', 'no-referrer');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
