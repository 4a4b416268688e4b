/**
 * The kit's checks of what a provider declares and builds: its name and features, and `request()`
 * for every kind of message its features allow (each body then sent to the upstream, which must
 * take it), with a MessageValidationError naming the field for a message that cannot go.
 */
import { isDeepStrictEqual } from 'node:util';
import { isColloquyError, type Issue } from '../errors.js';
import { buttons, flow, FLOW_TOKEN_PLACEHOLDER, list, text } from '../messages/builders.js';
import type { Message, TemplateMessage } from '../messages/message.js';
import { isProvider, type ProviderAddress } from '../transport/provider.js';
import { describeError, safeJson, sendOnce, type CheckResult, type World } from './provider-world.js';

const PASSED: CheckResult = { status: 'passed' };
const FEATURES = ['text', 'templates', 'window', 'readReceipts', 'sms'] as const;

/** `name`, `features` and `markRead` agree with the contract. */
export async function checkFeatures(w: World): Promise<CheckResult> {
  const p = w.provider;
  if (typeof p.send !== 'function' || typeof p.close !== 'function') w.fail('the provider must have send() and close()');
  if (typeof p.name !== 'string' || p.name.trim() === '') w.fail(`name is ${safeJson(p.name)}; give the provider a short non-empty name (it appears in logs, metrics and errors)`);
  if (typeof p.features !== 'object' || p.features === null) w.fail('features is missing; declare { text, templates, window, readReceipts, sms }, each true or false');
  const bad = FEATURES.filter((f) => typeof (p.features as unknown as Record<string, unknown>)[f] !== 'boolean');
  if (bad.length > 0) w.fail(`features.${bad.join(', features.')} must be true or false (got ${safeJson(p.features)})`);
  if (typeof p.request !== 'function' || !isProvider(p)) w.fail('request(message, address) is missing; the runtime builds every WhatsApp-channel body with it');
  const hasMarkRead = typeof p.markRead === 'function';
  if (p.features.readReceipts && !hasMarkRead) w.fail('features.readReceipts is true but markRead() is missing; add markRead(receipt) or declare readReceipts: false');
  if (!p.features.readReceipts && p.markRead !== undefined)
    w.fail('markRead is present but features.readReceipts is false; remove markRead or declare readReceipts: true (the runtime goes by the feature)');
  return PASSED;
}

/** A list message. */
export async function checkList(w: World): Promise<CheckResult> {
  const message = list({
    header: 'Menu',
    body: 'Which pizza would you like?',
    footer: 'Baked to order',
    button: 'Pizzas',
    sections: [
      {
        title: 'Classics',
        rows: [
          { id: 'margherita', title: 'Margherita', description: 'Tomato and mozzarella' },
          { id: 'marinara', title: 'Marinara' },
        ],
      },
      { title: 'Specials', rows: [{ id: 'funghi', title: 'Funghi' }] },
    ],
  });
  await buildsAndSends(w, 'a list (two sections)', message);
  return PASSED;
}

/** Reply buttons without a header and with each media header. */
export async function checkButtons(w: World): Promise<CheckResult> {
  const base = {
    body: 'Which size?',
    footer: 'Prices include tax',
    buttons: [
      { id: 'small', title: 'Small' },
      { id: 'medium', title: 'Medium' },
      { id: 'large', title: 'Large' },
    ],
  };
  const variants: [string, Message][] = [
    ['reply buttons without a header', buttons(base)],
    ['reply buttons with an image header', buttons({ ...base, image: 'https://example.com/pizza.jpg' })],
    ['reply buttons with a video header', buttons({ ...base, video: 'https://example.com/oven.mp4' })],
    ['reply buttons with a document header', buttons({ ...base, document: { link: 'https://example.com/menu.pdf', fileName: 'menu.pdf' } })],
  ];
  for (const [label, message] of variants) await buildsAndSends(w, label, message);
  return PASSED;
}

/** Flow messages, both actions, with the conversation's token put in for the placeholder. */
export async function checkFlows(w: World): Promise<CheckResult> {
  const navigate = flow({ body: 'Where should we deliver?', flowId: '1234567890', cta: 'Enter address', screen: 'ADDRESS', data: { city: 'Berlin' } });
  const exchange = flow({ body: 'Book a table', flowId: '1234567891', cta: 'Book', action: 'data_exchange' });
  for (const [label, message] of [
    ['a flow (navigate)', navigate],
    ['a flow (data_exchange)', exchange],
  ] as const) {
    const json = safeJson(await buildsAndSends(w, label, message));
    if (!json.includes(w.address.flowToken)) w.fail(`request() for ${label} does not carry the conversation's flow token (address.flowToken); put it where the message holds the placeholder`);
    if (json.includes(FLOW_TOKEN_PLACEHOLDER)) w.fail(`request() for ${label} still carries the placeholder "${FLOW_TOKEN_PLACEHOLDER}"; replace it with address.flowToken`);
  }
  return PASSED;
}

/** Plain text, when the provider carries it. */
export async function checkText(w: World): Promise<CheckResult> {
  if (!w.provider.features.text) return { status: 'not-applicable', reason: 'features.text is false: the runtime sends text by SMS and never asks request() for it' };
  await buildsAndSends(w, 'a text message', text('Your pizza is on its way. 🍕'));
  return PASSED;
}

/** The template sent when the options name none: one body parameter, as the Cloud API's reference shows it. */
const SAMPLE_TEMPLATE: TemplateMessage = {
  kind: 'template',
  template: { name: 'conformance_check', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Tuesday 10:00' }] }] },
};

/** A template: built when the provider has templates, refused with MessageValidationError when not. */
export async function checkTemplate(w: World): Promise<CheckResult> {
  const message = w.options.template ?? SAMPLE_TEMPLATE;
  if (w.provider.features.templates) await buildsAndSends(w, 'a template', message);
  else refuses(w, 'a template on a provider with features.templates false', message, w.address);
  return PASSED;
}

/** Messages that cannot go are refused with MessageValidationError naming the field. */
export async function checkInvalid(w: World): Promise<CheckResult> {
  const noRows: Message = { kind: 'list', listMessages: { body: 'Pick one', buttonText: 'Choose', sections: [] } };
  const four = [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `Button ${i}` }));
  const fourButtons: Message = { kind: 'buttons', replyButtons: { body: 'Pick one', buttons: four } };
  const longLabel: Message = { kind: 'list', listMessages: { body: 'Pick one', buttonText: 'A label far longer than twenty characters', sections: [{ messages: [{ id: 'a', title: 'A' }] }] } };
  const tokenless = flow({ body: 'Where should we deliver?', flowId: '1234567890', cta: 'Enter address', screen: 'ADDRESS' });
  refuses(w, 'a list with no rows', noRows, w.address);
  refuses(w, 'reply buttons with four buttons (three at most)', fourButtons, w.address);
  refuses(w, 'a list whose button label has more than 20 characters', longLabel, w.address);
  refuses(w, 'a flow left with the placeholder token and no address.flowToken', tokenless, { from: w.address.from, to: w.address.to });
  return PASSED;
}

/** Builds `message`, checks the body is plain JSON, and sends it to an accepting upstream. */
async function buildsAndSends(w: World, label: string, message: Message): Promise<unknown> {
  let body: unknown;
  try {
    body = w.provider.request(message, w.address);
  } catch (err) {
    return w.fail(`request() threw for ${label} (${describeError(err)}); it must build a body for every kind the features allow`, err);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return w.fail(`request() returned ${safeJson(body)} for ${label}; it must return the request body, a JSON object`);
  if (!isPlainJson(body))
    w.fail(`request() for ${label} returned something that is not plain JSON; the body is stored with the message and sent later, so it must survive JSON.stringify and JSON.parse unchanged`);
  await w.answer('accept');
  const result = await sendOnce(w, { channel: 'interactive', request: body as Record<string, unknown>, from: w.address.from, numberId: w.numberId }, `for ${label}`);
  if (!result.ok) w.fail(`the upstream, answering "accept", refused the body request() built for ${label}: ${result.reason}`);
  return body;
}

/** `request()` must throw a MessageValidationError with at least one issue that names a field. */
function refuses(w: World, label: string, message: Message, address: ProviderAddress): void {
  let body: unknown;
  try {
    body = w.provider.request(message, address);
  } catch (err) {
    if (!isColloquyError(err) || err.code !== 'message_invalid') {
      w.fail(`request() threw ${describeError(err)} for ${label}; throw MessageValidationError (exported by 'colloquy') listing each problem with its field path`, err);
    }
    const issues = (err as { issues?: readonly Issue[] }).issues ?? [];
    if (!issues.some((i) => Array.isArray(i.path) && i.path.length > 0)) {
      w.fail(`request() threw a MessageValidationError for ${label} with no field path; give each issue the path of the field at fault (e.g. ["listMessages", "sections"])`);
    }
    return;
  }
  w.fail(
    `request() returned a body for ${label} (${safeJson(body).slice(0, 200)}); it must throw MessageValidationError naming the field, so the runtime reports it against the bot and state instead of sending`,
  );
}

function isPlainJson(v: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(JSON.stringify(v)), v);
  } catch {
    return false;
  }
}
