/**
 * Support triage: a topic list → a how-to video as reply buttons with a video header → if it did
 * not help, the customer describes the problem in free text → the chat is handed to a person
 * (`handoff()`); when the agent hands it back the bot asks whether there is anything else, and when
 * no agent claims it within 10 minutes the customer is promised a call back by SMS.
 * A message that cannot be delivered ends the conversation as unreachable.
 */
import { assign, setup } from 'xstate';
import { buttons, defineBot, handoff, list, say, sms, template, text, type ColloquyEvent } from 'colloquy';

export const TOPICS = {
  wifi: { title: 'Wi-Fi problems', video: 'https://videos.example.com/howto/restart-router.mp4' },
  billing: { title: 'A billing question', video: 'https://videos.example.com/howto/read-your-bill.mp4' },
  setup: { title: 'Setting up a device', video: 'https://videos.example.com/howto/first-setup.mp4' },
} as const;
export type Topic = keyof typeof TOPICS;

export interface SupportContext {
  user: string;
  topic?: Topic;
  description?: string;
  ticket?: string;
}

export const machine = setup({
  types: { context: {} as SupportContext, input: {} as { user: string }, events: {} as ColloquyEvent },
}).createMachine({
  id: 'support',
  context: ({ input }) => ({ user: input.user }),
  initial: 'topic',
  on: { 'delivery.failed': '.unreachable' },
  states: {
    topic: {
      entry: say(
        list({
          header: 'Help desk',
          body: 'What can we help you with?',
          footer: 'Mon-Sat, 8:00-20:00',
          button: 'Topics',
          sections: [
            {
              title: 'Service',
              rows: [
                { id: 'wifi', title: TOPICS.wifi.title, description: 'No signal, slow, dropping' },
                { id: 'setup', title: TOPICS.setup.title },
              ],
            },
            { title: 'Account', rows: [{ id: 'billing', title: TOPICS.billing.title, description: 'Charges, invoices, payments' }] },
          ],
        }),
      ),
      on: {
        'reply.wifi': { target: 'howto', actions: assign({ topic: 'wifi' as const }) },
        'reply.billing': { target: 'howto', actions: assign({ topic: 'billing' as const }) },
        'reply.setup': { target: 'howto', actions: assign({ topic: 'setup' as const }) },
      },
    },
    howto: {
      entry: say(({ context }) =>
        buttons({
          video: TOPICS[context.topic!].video,
          body: `This two-minute video solves most ${TOPICS[context.topic!].title.toLowerCase()}. Did it help?`,
          buttons: [
            { id: 'solved', title: 'Yes, solved' },
            { id: 'agent', title: 'No, talk to a person' },
          ],
        }),
      ),
      on: { 'reply.solved': 'resolved', 'reply.agent': 'describe' },
    },
    describe: {
      entry: say(text('Please describe what is happening, in one message.')),
      on: {
        text: {
          target: 'handoff',
          actions: assign({ description: ({ event }) => event.text.slice(0, 500), ticket: ({ context }) => `T-${context.user.slice(-4)}-${Math.floor(Date.now() / 1000) % 100_000}` }),
        },
      },
    },
    handoff: {
      entry: [
        say(({ context }) => text(`Thanks. Ticket ${context.ticket} is open; a person will take over this chat in a moment.`)),
        handoff(({ context }) => ({ reason: `${TOPICS[context.topic!].title}: ${context.description}`.slice(0, 500), queue: context.topic! })),
      ],
      on: { 'handoff.ended': 'anythingElse', 'handoff.timeout': 'callback' },
    },
    anythingElse: {
      entry: say(
        buttons({
          body: 'You are back with the assistant. Is there anything else we can help with?',
          buttons: [
            { id: 'more', title: 'Yes, something else' },
            { id: 'done', title: 'No, thank you' },
          ],
        }),
      ),
      on: { 'reply.more': 'topic', 'reply.done': 'resolved' },
    },
    callback: {
      type: 'final',
      entry: [
        say(({ context }) => text(`Sorry, all our agents are busy. Ticket ${context.ticket} stays open.`)),
        say(({ context }) => sms(`Help desk: ticket ${context.ticket} (${TOPICS[context.topic!].title}). An agent will call this number within 2 hours.`)),
      ],
    },
    resolved: { type: 'final', entry: say(text('Great! Write any time if you need us again.')) },
    unreachable: { type: 'final' },
  },
});

/**
 * What goes instead of a free-form message once the user's 24-hour window closed (on the Cloud
 * API): a template the sandbox knows (approve your own in WhatsApp Manager). Its "Continue" comes
 * back as \`reply.continue\`, which no state handles: the current prompt is sent again, the window open.
 */
const reopen = template({
  name: 'colloquy_reopen',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'from the help desk' }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'continue' }] },
  ],
});

export default defineBot({ id: 'support', machine, options: { sender: '15550000003', fallback: { maxSegments: 2 }, window: { closed: { template: reopen } } } });
