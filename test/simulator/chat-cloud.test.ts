/**
 * The terminal chat on the Cloud API: WhatsApp text, templates with numbered quick replies, read
 * ticks and the 24-hour window. The sandbox's Cloud API mode is faked at its edge: its records
 * (an accepted Cloud API message) and its two read-outs, `window(user)` and `reads(user)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot } from '../../src/index.js';
import type { Sandbox } from '../../src/sandbox/api.js';
import type { AcceptedCloud, AcceptedRead, SandboxMessage } from '../../src/sandbox/types.js';
import { ChatSession } from '../../src/simulator/chat.js';
import type { WindowState } from '../../src/simulator/cloud-sandbox.js';

const USER = '15551230001';

/** Waits for a quick reply; says nothing on its own (what it "sent" is faked in the sandbox). */
const quiet = defineBot({
  id: 'quiet',
  machine: setup({}).createMachine({ id: 'quiet', initial: 'waiting', states: { waiting: { on: { 'reply.confirm': 'confirmed' } }, confirmed: {} } }),
  options: { onUnhandled: 'ignore' },
});

function cloud(seq: number, request: Record<string, unknown>, type: string): AcceptedCloud {
  return {
    seq,
    channel: 'cloud-api',
    numberId: '1098765',
    from: '15550000001',
    to: USER,
    type,
    request: { messaging_product: 'whatsapp', to: USER, ...request },
    providerId: `wamid.out${seq}`,
    at: 0,
  };
}

/** Fakes the Cloud API mode on a real sandbox: its window and reads, and messages it accepted. */
function fakeCloud(sandbox: Sandbox) {
  const state = { window: { open: false } as WindowState, reads: [] as AcceptedRead[] };
  Object.assign(sandbox, { window: (user: string) => (user === USER ? state.window : { open: false }), reads: (user?: string) => state.reads.filter((r) => user === undefined || r.user === user) });
  const accept = (m: AcceptedCloud) => (sandbox.messages as SandboxMessage[]).push(m);
  return { state, accept };
}

let session: ChatSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe('the terminal chat on the Cloud API', () => {
  it('prints text as text, a template with its quick replies, read ticks and the window as it opens and closes', async () => {
    let out = '';
    session = await ChatSession.start({ bot: quiet, out: (t) => (out += t) });
    const fake = fakeCloud(session.conversation.sandbox);
    fake.accept(cloud(1, { type: 'text', text: { body: 'Hello!\nHow can I help?' } }, 'text'));
    fake.state.reads.push({ seq: 1, numberId: '1098765', messageId: 'wamid.harness1', user: USER, typing: true, at: 0 });
    fake.state.window = { open: true, lastUserMessageAt: 0, closesAt: 86_400_000 };
    out = '';
    await session.handle('hi');
    expect(out).toBe(['      ✓✓ read, typing…', 'bot › Hello!', '      How can I help?', '(window open: the bot can write to you freely for 24 hours after your last message)', '', ''].join('\n'));

    fake.state.window = { open: false, lastUserMessageAt: 0, closesAt: 86_400_000 };
    fake.accept(
      cloud(
        2,
        {
          type: 'template',
          template: {
            name: 'booking_reminder',
            language: { code: 'en' },
            components: [
              { type: 'body', parameters: [{ type: 'text', text: 'Tuesday' }] },
              { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
              { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'cancel' }] },
            ],
          },
        },
        'template',
      ),
    );
    out = '';
    await session.handle('/wait 25h');
    expect(out).toBe(
      ['(1d 1h later)', 'bot › [template booking_reminder (en)] Tuesday', '      1. [ confirm ]', '      2. [ cancel ]', '(window closed: only templates can reach you)', '', ''].join('\n'),
    );

    // "1" picks the template's first quick reply: the bot gets reply.confirm, as from a `button` message.
    out = '';
    await session.handle('1');
    expect(session.conversation.state).toBe('confirmed');
    const events = (await session.conversation.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(events.at(-1)).toEqual({ type: 'reply.confirm', id: 'confirm', title: 'confirm', via: 'template' });
    expect(out).toBe('(no answer)\n\n');
  });

  it("prints a template the sandbox knows as the user sees it, and a quick reply's tap carries its payload and text", async () => {
    let out = '';
    session = await ChatSession.start({ bot: quiet, out: (t) => (out += t) });
    const template = {
      name: 'colloquy_reopen',
      language: { code: 'en' },
      components: [
        { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
        { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
      ],
    };
    // Rendered by the sandbox's own renderTemplate (its Cloud API mode knows colloquy_reopen).
    (session.conversation.sandbox.messages as SandboxMessage[]).push(cloud(1, { type: 'template', template }, 'template'));
    out = '';
    await session.handle('/wait 1m');
    // The real window read-out: closed, as the harness hands the user's messages to the runtime, not through the sandbox.
    expect(out).toBe(
      [
        '(1m later)',
        'bot › [template colloquy_reopen (en)]',
        '      Hi Ada, we have an update for you. Shall we continue?',
        '      1. [ Continue ]',
        '      2. [ Not now ]',
        '(window closed: only templates can reach you)',
        '',
        '',
      ].join('\n'),
    );
    await session.handle('continue');
    const events = (await session.conversation.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(events.at(-1)).toEqual({ type: 'reply.confirm', id: 'confirm', title: 'Continue', via: 'template' });
    expect(session.conversation.state).toBe('confirmed');
  });

  it('prints no window and no ticks on the seed provider', async () => {
    let out = '';
    session = await ChatSession.start({ bot: quiet, out: (t) => (out += t) });
    out = '';
    await session.handle('hi');
    expect(out).toBe('(no answer)\n\n');
  });
});
