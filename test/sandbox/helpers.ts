/** Shared test helpers: a sandbox on 127.0.0.1, a fake clock, a token, the seed's five requests. */
import request from 'supertest';
import { afterEach } from 'vitest';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_PATHS, startSandbox, type RunningSandbox, type StartSandboxOptions } from '../../src/sandbox/index.js';

const running: RunningSandbox[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

/** A sandbox on its own server on 127.0.0.1, closed after the test. */
export async function start(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const r = await startSandbox({ port: 0, host: '127.0.0.1', ...options });
  running.push(r);
  return r;
}

/** A clock moved by hand. */
export function fakeClock(start = 1_700_000_000_000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** Gets a token over HTTP with the default credentials. */
export async function getToken(url: string): Promise<string> {
  const res = await request(url).post(SANDBOX_PATHS.token).type('form').send({ grant_type: 'client_credentials', client_id: SANDBOX_CLIENT_ID, client_secret: SANDBOX_CLIENT_SECRET }).expect(200);
  return (res.body as { access_token: string }).access_token;
}

/** Posts an interactive request with a bearer token. */
export function postMessage(url: string, token: string, body: unknown): request.Test {
  return request(url)
    .post(SANDBOX_PATHS.messaging)
    .set('Authorization', `Bearer ${token}`)
    .send(body as object);
}

/** Posts an SMS request with a bearer token. */
export function postSms(url: string, token: string, body: unknown): request.Test {
  return request(url)
    .post(SANDBOX_PATHS.sms)
    .set('Authorization', `Bearer ${token}`)
    .send(body as object);
}

export const FROM = '15550000001';
export const TO = '5215512345678';

/** The seed's list message: one section of ten rows. */
export const listRequest = {
  from: FROM,
  to: TO,
  type: 'contacts',
  listMessages: {
    headerText: 'Our menu',
    body: 'Pick a pizza',
    footer: 'Prices include tax',
    buttonText: 'See pizzas',
    sections: [
      {
        title: 'Pizzas',
        messages: Array.from({ length: 10 }, (_, i) => ({ id: String(i + 1), title: `Pizza ${i + 1}`, description: `Description ${i + 1}` })),
      },
    ],
  },
};

const buttons = [
  { id: '1', title: 'Small' },
  { id: '2', title: 'Medium' },
  { id: '3', title: 'Large' },
];

/** Reply buttons with an image header. */
export const imageButtonsRequest = {
  from: FROM,
  to: TO,
  type: 'interactive',
  replyButtons: { headerImage: { link: 'https://example.com/pizza.jpg' }, body: 'Which size?', footer: 'Tap one', buttons },
};

/** Reply buttons with a video header. */
export const videoButtonsRequest = {
  from: FROM,
  to: TO,
  type: 'interactive',
  replyButtons: { headerVideo: { link: 'https://example.com/oven.mp4' }, body: 'Which size?', footer: 'Tap one', buttons },
};

/** Reply buttons with a document header and its file name. */
export const documentButtonsRequest = {
  from: FROM,
  to: TO,
  type: 'interactive',
  replyButtons: { headerDocument: { link: 'https://example.com/menu.pdf', fileName: 'menu.pdf' }, body: 'Which size?', footer: 'Tap one', buttons },
};

/** The seed's flow message with action.parameters. */
export const flowRequest = {
  from: FROM,
  to: TO,
  type: 'interactive',
  flow: {
    body: 'Order your pizza',
    action: {
      name: 'flow',
      parameters: {
        mode: 'draft',
        flow_message_version: '3',
        flow_id: '1234567890',
        flow_token: 'FLOW_TOKEN_abc',
        flow_cta: 'Order now',
        flow_action: 'navigate',
        flow_action_payload: {
          screen: 'PRODUCT',
          data: { product_name: 'Margherita', product_description: 'Tomato and mozzarella', product_price: 129.5 },
        },
      },
    },
  },
};

/** A valid SMS body. */
export const smsRequest = { msisdns: [TO], message: 'Your pizza is on its way', tag: 'pizza-bot', country: 'MX' };
