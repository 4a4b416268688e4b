/** What the Cloud API tests share: the sandbox's reopening template and a short view of what was sent. */
import { template } from '../../src/index.js';
import type { TestConversation } from '../../src/simulator/testing.js';

export const HOUR = 3_600_000;

/** The sandbox's `colloquy_reopen`, its quick reply coming back as `reply.continue`. */
export const reopen = template({
  name: 'colloquy_reopen',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'from the clinic' }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'continue' }] },
  ],
});

/** Each message sent, as `channel:kind`. */
export const kinds = (c: TestConversation): string[] => c.sent.map((m) => `${m.channel}:${m.kind}`);
