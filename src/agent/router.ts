/**
 * The agents' HTTP API (JSON) over a runtime's {@link HandoffDesk}: the queue, claim, messages,
 * release and transcripts, the live queue (`/agent/stream`), canned replies, and the inbox's pages
 * (`/agent`, sign-in and sign-out; see inbox/pages.ts). Mount it at the server's root; its routes
 * are under `/agent`.
 *
 * Who calls is decided by auth.ts: an agent's own token or session is that agent (a body or
 * `X-Agent` naming another is 403); the service token and the open sandbox act for the agent named
 * by `agent` in the JSON body or the `X-Agent` header.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { HandoffError, type HandoffDesk } from '../conversation/handoff-desk.js';
import { isUnstorable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { AgentActor, AgentStore, AgentVia } from '../store/agent-types.js';
import { agentAuth, credentialHolds, requestActor, requestCredential, secretHash, type AgentAuth, type AgentCredential } from './auth.js';
import { agentMessage, ClaimBody, MessageBody, NoteBody, parseBody, QueueQuery, ReleaseBody, RepliesQuery } from './input.js';
import { HandoffFeed, type StreamCaller } from './feed.js';
import { addInboxPages, inboxSessions, type InboxSessions } from './inbox/pages.js';
import { repliesFor, type CannedReplies } from './replies.js';

/** What {@link createAgentRouter} takes. */
export interface AgentRouterOptions extends Omit<AgentAuth, 'store'> {
  readonly desk: HandoffDesk;
  /** Where agents and sessions are looked up (default: the desk's store). */
  readonly store?: AgentStore | undefined;
  readonly logger?: Logger | undefined;
  /** The largest request body, in bytes (default 64 kB). */
  readonly maxBodyBytes?: number | undefined;
  /** The inbox's canned replies by queue (COLLOQUY_AGENT_REPLIES_FILE). */
  readonly replies?: CannedReplies | undefined;
  /** How long an inbox sign-in lasts, in hours (COLLOQUY_AGENT_SESSION_HOURS; default 12). */
  readonly sessionHours?: number | undefined;
  /** How the inbox signs agents in (default: sessions in the agents' store, on `now`'s clock). */
  readonly sessions?: InboxSessions | undefined;
  /** How often `/agent/stream` checks the store for other processes' changes (default 2 s). */
  readonly streamCheckMs?: number | undefined;
  /** How often an idle `/agent/stream` gets a comment line, for proxies (default 15 s). */
  readonly streamHeartbeatMs?: number | undefined;
  /** How long a `/agent/stream` whose client stopped reading stays open (default 30 s). */
  readonly streamStallMs?: number | undefined;
  /** The most `/agent/stream`s one agent may have open; another is refused 429 (default 8). */
  readonly maxStreamsPerAgent?: number | undefined;
  /** The most `/agent/stream`s open at once; another is refused 503 (default 1000). */
  readonly maxStreams?: number | undefined;
  /** @deprecated The name of `serviceToken` before agents had tokens of their own; still honoured. */
  readonly token?: string | undefined;
}

const STATUS = { not_found: 404, conflict: 409, invalid: 400, idempotency_key_reused: 422, forbidden: 403 } as const;
/** The body parser's errors whose message it wrote itself (others carry a library's text, e.g. zlib's). */
const OWN_WORDS = new Set(['charset.unsupported', 'encoding.unsupported', 'request.aborted', 'request.size.invalid']);
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Creates the agents' router (routes under `/agent`). */
export function createAgentRouter(o: AgentRouterOptions): Router {
  const router = express.Router();
  const json = express.json({ limit: o.maxBodyBytes ?? 64 * 1024, type: () => true });
  const store = o.store ?? o.desk.agents;
  const now = o.now ?? Date.now;
  const feed = new HandoffFeed({
    desk: o.desk,
    logger: o.logger,
    checkMs: o.streamCheckMs,
    heartbeatMs: o.streamHeartbeatMs,
    stallMs: o.streamStallMs,
    maxStreamsPerAgent: o.maxStreamsPerAgent,
    maxStreams: o.maxStreams,
  });
  // The pages before the API's authentication: they answer a request without a session themselves.
  addInboxPages(router, endingStreams(o.sessions ?? inboxSessions(store, now, o.sessionHours), feed));
  router.use('/agent', agentAuth({ ...o, serviceToken: o.serviceToken ?? o.token, store }));
  router.get('/agent/me', (_req, res) => {
    const actor = res.locals['actor'] as AgentActor | undefined;
    const identity = res.locals['agentIdentity'] as { via: AgentVia } | undefined;
    res.json({ agent: actor?.name ?? null, via: actor?.via ?? identity?.via ?? null });
  });
  router.get(
    '/agent/replies',
    wrap(async (req, res) => void res.json({ replies: repliesFor(o.replies, parseBody(RepliesQuery, { ...req.query }).queue) })),
  );
  router.get('/agent/stream', (req, res) => feed.stream(req, res, streamCaller(requestCredential(res), store, now)));
  router.get(
    '/agent/handoffs',
    wrap(async (req, res) => void res.json({ handoffs: await o.desk.queue(parseBody(QueueQuery, { ...req.query })) })),
  );
  router.post(
    '/agent/handoffs/:id/claim',
    json,
    wrap(async (req, res) => {
      const b = parseBody(ClaimBody, req.body);
      res.json({ handoff: await o.desk.claim(idOf(req), requestActor(req, res, b.agent)) });
    }),
  );
  router.post(
    '/agent/handoffs/:id/messages',
    json,
    wrap(async (req, res) => {
      const b = parseBody(MessageBody, req.body);
      const key = req.get('idempotency-key');
      if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw new HandoffError('invalid', 'Idempotency-Key: must be 1 to 255 printable ASCII characters', 'Idempotency-Key');
      const id = idOf(req);
      const agent = requestActor(req, res, b.agent);
      // The request as sent, minus who sent it (the agent is fingerprinted on its own, from body or header).
      const { agent: _who, ...request } = b;
      const r = await o.desk.send(id, agent, agentMessage(b), key, request);
      res.status(r.duplicate ? 200 : 202).json({ outboxId: r.outboxId, duplicate: r.duplicate });
    }),
  );
  router.post(
    '/agent/handoffs/:id/release',
    json,
    wrap(async (req, res) => {
      const b = parseBody(ReleaseBody, req.body);
      res.json({ handoff: await o.desk.release(idOf(req), requestActor(req, res, b.agent), b.note) });
    }),
  );
  router.post(
    '/agent/handoffs/:id/notes',
    json,
    wrap(async (req, res) => {
      const b = parseBody(NoteBody, req.body);
      res.status(201).json({ note: await o.desk.note(idOf(req), requestActor(req, res, b.agent), b.text) });
    }),
  );
  router.get(
    '/agent/conversations/:id',
    wrap(async (req, res) => void res.json(await o.desk.conversation(idOf(req)))),
  );
  router.use('/agent', (_req, res) => void res.status(404).json({ error: { code: 'not_found', message: "no such agents' API route" } }));
  router.use('/agent', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const e = err as { type?: string; status?: number; expose?: boolean; message?: string };
    if (e.type === 'entity.parse.failed') return void res.status(400).json({ error: { code: 'invalid', message: 'body: not valid JSON', field: 'body' } });
    if (e.type === 'entity.too.large') return void res.status(413).json({ error: { code: 'too_large', message: 'body: too large' } });
    if (e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      // The body parser's other refusals (a charset or Content-Encoding it cannot read, a body that
      // does not inflate, a request cut short): the client's to fix, written for the client.
      o.logger?.debug({ err: errorInfo(err) }, "agents' API request refused: its body could not be read");
      const said = e.type !== undefined && OWN_WORDS.has(e.type) ? e.message : 'could not be read (check its Content-Encoding and Content-Length)';
      return void res.status(e.status).json({ error: { code: e.status === 415 ? 'unsupported' : 'invalid', message: `body: ${said}`, field: 'body' } });
    }
    if (isUnstorable(err)) {
      // A value the database cannot hold fails the same way every time: the caller's to change.
      o.logger?.error({ err: errorInfo(err) }, "agents' API request refused: a value the database cannot store");
      return void res.status(422).json({ error: { code: 'unstorable', message: `the request holds a value the database cannot store (${errorInfo(err).message})` } });
    }
    o.logger?.error({ err: errorInfo(err) }, "agents' API request failed");
    res.status(500).json({ error: { code: 'internal', message: 'the request failed; see the server log' } });
  });
  return router;
}

/** Who a stream is for, and how it asks again whether its credential holds. */
function streamCaller(c: AgentCredential, store: AgentStore, now: () => number): StreamCaller {
  return {
    owner: 'agent' in c ? `agent:${c.agent}` : c.via,
    credential: 'hash' in c ? `${c.via}:${c.hash}` : c.via,
    holds: () => credentialHolds(store, c, now()),
  };
}

/** The inbox's sessions, except that signing out also ends the session's streams in this process at once. */
function endingStreams(sessions: InboxSessions, feed: HandoffFeed): InboxSessions {
  return {
    start: (token) => sessions.start(token),
    of: (req) => sessions.of(req),
    end: async (id) => {
      await sessions.end(id);
      feed.endCredential(`session:${secretHash(id)}`);
    },
    now: () => sessions.now(),
  };
}

function wrap(fn: (req: Request, res: Response) => Promise<void>) {
  return (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch((err: unknown) => {
      if (!(err instanceof HandoffError)) return next(err);
      res.status(STATUS[err.code as keyof typeof STATUS] ?? 400).json({ error: { code: err.code, message: err.message, ...(err.field !== undefined && { field: err.field }) } });
    });
  };
}

/** The conversation id of the path; anything but a positive integer is an unknown conversation. */
function idOf(req: Request): number {
  const raw = String(req.params['id']);
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw new HandoffError('not_found', `no conversation ${JSON.stringify(raw)}`);
  return Number(raw);
}
