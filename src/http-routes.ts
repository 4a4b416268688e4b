/**
 * Every HTTP route `colloquy serve` answers, declared once: method, path, when it is mounted and
 * what it is for. docs/reference/http.md is generated from this list (`npm run docs:generate`),
 * and a test holds the running server and its routers to it, both ways.
 */

/** When a route is mounted. */
export type RouteMount = 'always' | 'sandbox' | 'sandbox-controls';

/** The routers a route belongs to (what a test walks to find it). */
export type RouteOwner = 'server' | 'webhook' | 'flows' | 'agent' | 'simulator' | 'agent-console' | 'sandbox';

/** One route. */
export interface HttpRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Express's syntax: `:id` is a path parameter; `*` stands for the routes under a prefix. */
  readonly path: string;
  readonly mounted: RouteMount;
  readonly owner: RouteOwner;
  /** What it is for, one sentence for a person. */
  readonly meaning: string;
}

/** What each {@link RouteMount} means, for the reference. */
export const ROUTE_MOUNTS: Readonly<Record<RouteMount, string>> = {
  always: 'always',
  sandbox: 'with the sandbox provider (no `COLLOQUY_BASE_URL`)',
  'sandbox-controls': 'with the sandbox, on a loopback `HOST` or with `COLLOQUY_SANDBOX_PUBLIC=1`',
};

/** The routes, in the reference's order. */
export const HTTP_ROUTES: readonly HttpRoute[] = [
  {
    method: 'POST',
    path: '/webhook',
    mounted: 'always',
    owner: 'webhook',
    meaning: 'Inbound messages and delivery statuses from the provider; answered 200 once stored (503 while the database is unavailable).',
  },
  {
    method: 'GET',
    path: '/webhook',
    mounted: 'always',
    owner: 'webhook',
    meaning: 'The provider\u2019s verification handshake (`hub.mode`, `hub.verify_token`, `hub.challenge`; COLLOQUY_VERIFY_TOKEN).',
  },
  { method: 'POST', path: '/webhook/sms', mounted: 'always', owner: 'webhook', meaning: 'Inbound SMS replies.' },
  {
    method: 'POST',
    path: '/flows',
    mounted: 'always',
    owner: 'flows',
    meaning:
      'The WhatsApp Flow endpoint (`data_exchange`): encrypted requests signed with the app secret, answered from the conversation that sent the flow (432 bad signature, 421 cannot decrypt, 427 token no longer valid, 503 no key configured).',
  },
  {
    method: 'POST',
    path: '/flows/:phoneNumberId',
    mounted: 'always',
    owner: 'flows',
    meaning: 'The Flow endpoint of one number of the numbers file, with that number’s own key and app secret (404 for a number not served).',
  },
  {
    method: 'GET',
    path: '/healthz',
    mounted: 'always',
    owner: 'server',
    meaning:
      'Health: 200 with `{ ok: true, status, bots, provider, store }`, where `status` is `degraded` while the database is busy or unavailable (work waits and is retried); 503 while the server starts or stops.',
  },
  { method: 'GET', path: '/metrics', mounted: 'always', owner: 'server', meaning: 'Prometheus metrics in the text exposition format (see the metrics reference).' },
  {
    method: 'GET',
    path: '/agent',
    mounted: 'always',
    owner: 'agent',
    meaning: 'The agents\u2019 inbox (a page): with a live session the live queue and conversations; without one, 401 and the sign-in form.',
  },
  {
    method: 'POST',
    path: '/agent/session',
    mounted: 'always',
    owner: 'agent',
    meaning:
      'Signs an agent in with its token (form `token=`, answered 303 to the inbox, or JSON `{ token }`): a session cookie `colloquy_agent` (HttpOnly, SameSite=Strict, Path=/agent, Secure over HTTPS); a cross-site request is refused.',
  },
  { method: 'POST', path: '/agent/session/end', mounted: 'always', owner: 'agent', meaning: 'Signs out: ends the session (the page\u2019s CSRF value in `X-CSRF-Token` or the form\u2019s `csrf`).' },
  { method: 'GET', path: '/agent/assets/:name', mounted: 'always', owner: 'agent', meaning: 'The inbox page\u2019s script and styles.' },
  { method: 'GET', path: '/agent/me', mounted: 'always', owner: 'agent', meaning: 'Who the request is: `{ agent, via }` (`token`, `session`, `service` or `open`).' },
  {
    method: 'GET',
    path: '/agent/stream',
    mounted: 'always',
    owner: 'agent',
    meaning:
      'Server-sent events: a `queue` event (`{ now, handoffs }`) at once and whenever a handoff changes, in this process or another on the same database (checked every 2 s while streams are open); a comment line every 15 s.',
  },
  {
    method: 'GET',
    path: '/agent/replies',
    mounted: 'always',
    owner: 'agent',
    meaning: 'The canned replies for a queue (`?queue=`): its own, then those for every queue (COLLOQUY_AGENT_REPLIES_FILE).',
  },
  {
    method: 'GET',
    path: '/agent/handoffs',
    mounted: 'always',
    owner: 'agent',
    meaning:
      'The agents\u2019 queue of open handoffs (`?status=waiting|claimed`, `?queue=`, `?bot=`); every `/agent` route takes `Authorization: Bearer` with an agent\u2019s own token (`colloquy agents add`; naming another agent is 403) or COLLOQUY_AGENT_TOKEN (the service account, acting for the agent the request names), or an inbox session.',
  },
  { method: 'POST', path: '/agent/handoffs/:id/claim', mounted: 'always', owner: 'agent', meaning: 'An agent claims a handoff (`{ agent? }`).' },
  {
    method: 'POST',
    path: '/agent/handoffs/:id/messages',
    mounted: 'always',
    owner: 'agent',
    meaning: 'An agent writes to the user (`{ agent?, text }` or `{ agent?, message }`; an `Idempotency-Key` header makes a retry safe).',
  },
  { method: 'POST', path: '/agent/handoffs/:id/release', mounted: 'always', owner: 'agent', meaning: 'An agent hands the conversation back to the bot (`{ agent?, note? }`).' },
  {
    method: 'POST',
    path: '/agent/handoffs/:id/notes',
    mounted: 'always',
    owner: 'agent',
    meaning: 'An agent adds an internal note to the open handoff, which the user never sees (`{ agent?, text }`, 1 to 2000 characters); 201 `{ note }`, a line of the handoff log.',
  },
  {
    method: 'GET',
    path: '/agent/conversations/:id',
    mounted: 'always',
    owner: 'agent',
    meaning:
      'A conversation\u2019s state, transcript, open handoff, what the user was last offered and tapped (`offered`), its handoff log (`log`: claims, messages, internal notes, releases), and the server\u2019s clock (`now`), for the agent holding it.',
  },
  {
    method: 'GET',
    path: '/sandbox/flows/public-key',
    mounted: 'sandbox',
    owner: 'server',
    meaning: 'The public half (PEM) of the Flow endpoint key the sandbox uses when no COLLOQUY_FLOW_PRIVATE_KEY is set, for simulators that play WhatsApp’s side of live flows.',
  },
  { method: 'POST', path: '/sandbox/token', mounted: 'sandbox', owner: 'sandbox', meaning: 'The sandbox provider\u2019s OAuth token endpoint (`{auth_url}/token`).' },
  {
    method: 'POST',
    path: '/sandbox/messaging-bsp-api-endpoint-ws/services/v1/messaging',
    mounted: 'sandbox',
    owner: 'sandbox',
    meaning: 'The sandbox provider\u2019s interactive messaging endpoint.',
  },
  { method: 'POST', path: '/sandbox/services/messaging', mounted: 'sandbox', owner: 'sandbox', meaning: 'The sandbox provider\u2019s SMS endpoint.' },
  {
    method: 'POST',
    path: '/sandbox/cloud/:version/:phoneNumberId/messages',
    mounted: 'sandbox',
    owner: 'sandbox',
    meaning: 'The sandbox playing Meta\u2019s Cloud API (`COLLOQUY_PROVIDER=cloud-api` without a token): messages and read receipts, checked as strictly as Meta does, with the 24-hour window.',
  },
  {
    method: 'GET',
    path: '/sandbox/_sandbox/',
    mounted: 'sandbox-controls',
    owner: 'sandbox',
    meaning: 'The sandbox\u2019s control routes (recorded requests, faults, tokens, simulated users), each with an example body.',
  },
  { method: 'GET', path: '/simulator/', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The web simulator: a phone per conversation, to tap through a bot.' },
  { method: 'GET', path: '/simulator/assets/*', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulator page\u2019s scripts and styles.' },
  { method: 'GET', path: '/simulator/api/bots', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The bots the simulator can talk to.' },
  { method: 'GET', path: '/simulator/api/state', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'One conversation as the simulator shows it (`?bot=`, `?user=`).' },
  { method: 'GET', path: '/simulator/api/events', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'Server-sent events: the conversation changed.' },
  { method: 'POST', path: '/simulator/api/text', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulated user types text.' },
  { method: 'POST', path: '/simulator/api/tap', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulated user taps a button or list row.' },
  { method: 'POST', path: '/simulator/api/flow', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulated user completes a flow.' },
  { method: 'POST', path: '/simulator/api/sms', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulated user answers by SMS.' },
  {
    method: 'POST',
    path: '/simulator/api/flow/open',
    mounted: 'sandbox-controls',
    owner: 'simulator',
    meaning: 'The simulated user taps a live flow\u2019s button: the simulator plays WhatsApp and sends INIT to the server\u2019s own `POST /flows` (encrypted, signed).',
  },
  {
    method: 'POST',
    path: '/simulator/api/flow/submit',
    mounted: 'sandbox-controls',
    owner: 'simulator',
    meaning: 'The simulated user submits a live flow\u2019s screen (through `POST /flows`); after `SUCCESS` the `nfm_reply` goes to the webhook.',
  },
  { method: 'POST', path: '/simulator/api/flow/back', mounted: 'sandbox-controls', owner: 'simulator', meaning: 'The simulated user goes back to a live flow\u2019s previous screen.' },
  {
    method: 'GET',
    path: '/simulator/agent/',
    mounted: 'sandbox-controls',
    owner: 'agent-console',
    meaning: 'The agent console: the handoff queue and conversations, for trying the agents\u2019 API by hand.',
  },
  { method: 'GET', path: '/simulator/agent/assets/:name', mounted: 'sandbox-controls', owner: 'agent-console', meaning: 'The agent console\u2019s script and styles.' },
];
