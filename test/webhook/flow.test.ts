/** A user taps through the order bot over POST /webhook, across restarts of the runtime. */
import { describe, expect, it } from 'vitest';
import type { AcceptedInteractive, AcceptedSms, SandboxMessage } from '../../src/sandbox/index.js';
import { SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import { USER, stack, type Stack } from './helpers.js';

function interactive(m: SandboxMessage | undefined): AcceptedInteractive {
  expect(m?.channel).toBe('interactive');
  return m as AcceptedInteractive;
}

async function settled(s: Stack, delivery: Promise<{ status: number; body: string }>): Promise<unknown> {
  const r = await delivery;
  expect(r.status).toBe(200);
  await s.runtime.idle();
  return JSON.parse(r.body);
}

describe('POST /webhook drives a conversation', () => {
  it('text → list, row → image buttons, button → flow, flow answer → final text, surviving restarts', async () => {
    const s = await stack({ bots: [orderBot] });
    const { sandbox } = s.sb;

    expect(await settled(s, sandbox.deliver.text(USER, 'hi'))).toEqual({ ok: true, received: 1, duplicates: 0, statuses: 0 });
    const list = interactive(sandbox.messages[0]);
    expect(list.to).toBe(USER);
    expect(list.request).toMatchObject({ from: sandbox.sender, to: USER, type: 'contacts', listMessages: { body: 'What would you like?', buttonText: 'See menu' } });
    expect(list.request.listMessages?.sections[0]?.messages.map((r) => r.id)).toEqual(['margherita', 'pepperoni']);

    await settled(s, sandbox.deliver.listReply(USER, { id: 'margherita', title: 'Margherita' }));
    const buttons = interactive(sandbox.messages[1]);
    expect(buttons.request).toMatchObject({
      type: 'interactive',
      replyButtons: {
        headerImage: { link: 'https://example.com/pizza.jpg' },
        body: 'Which size of margherita?',
        buttons: [
          { id: 'small', title: 'Small' },
          { id: 'large', title: 'Large' },
        ],
      },
    });

    await s.restart();
    await settled(s, sandbox.deliver.buttonReply(USER, { id: 'small', title: 'Small' }));
    const flow = interactive(sandbox.messages[2]);
    const params = flow.request.flow?.action.parameters;
    expect(params).toMatchObject({ flow_id: '1234567890', flow_cta: 'Enter address', flow_action: 'navigate', flow_message_version: '3' });
    const token = params?.flow_token;
    expect(token).toMatch(/.{8,}/);

    await s.restart();
    await settled(s, sandbox.deliver.flowReply(USER, { flowToken: token!, data: { address: '1 Main St' } }));
    expect(sandbox.messages).toHaveLength(4);
    const final = sandbox.messages[3] as AcceptedSms;
    expect(final.channel).toBe('sms');
    expect(final.text).toBe('Thanks! A small margherita to 1 Main St.');

    const [conv] = await s.store.conversations({ botId: 'order', user: USER });
    expect(conv?.status).toBe('done');
    expect(s.count('inbox')).toBe(4);
  });

  it('keeps the raw message and the whatsapp source in the inbox', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.sb.sandbox.deliver.text(USER, 'hello', { id: 'wamid.raw-1' });
    expect(r.status).toBe(200);
    const row = s.store.db.prepare('SELECT * FROM inbox WHERE provider_id = ?').get('wamid.raw-1') as Record<string, string>;
    expect(row['source']).toBe('whatsapp');
    expect(row['user_number']).toBe(USER);
    expect(row['bot_id']).toBe('order');
    expect(JSON.parse(row['event']!)).toEqual({ type: 'text', text: 'hello', via: 'whatsapp' });
    // The number written to is kept with the message: the runtime answers from the phone_number_id the user last wrote to.
    expect(JSON.parse(row['raw']!)).toMatchObject({
      id: 'wamid.raw-1',
      from: USER,
      type: 'text',
      text: { body: 'hello' },
      metadata: { phone_number_id: SANDBOX_PHONE_NUMBER_ID, display_phone_number: SANDBOX_SENDER },
    });
    await s.runtime.idle();
  });
});
