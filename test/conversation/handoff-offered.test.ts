/** What the user was last offered and which choice they tapped, read from a transcript. */
import { describe, expect, it } from 'vitest';
import { lastOffered } from '../../src/conversation/handoff-offered.js';
import { buttons, list, text } from '../../src/messages/builders.js';
import type { Message } from '../../src/messages/message.js';
import type { OutboxRecord, TranscriptEntry } from '../../src/store/types.js';

let id = 0;
function out(at: number, message: Message, o: { agent?: string; fallbackOf?: number } = {}): TranscriptEntry {
  const record = { id: ++id, kind: message.kind, message, agent: o.agent ?? null, fallbackOf: o.fallbackOf ?? null } as unknown as OutboxRecord;
  return { direction: 'out', at, record };
}
function tap(at: number, rowId: string, title: string, via = 'button'): TranscriptEntry {
  return { direction: 'in', at, source: 'whatsapp', event: { type: `reply.${rowId}`, id: rowId, title, via }, providerId: `p${at}`, state: 'done', error: null };
}
function said(at: number, t: string): TranscriptEntry {
  return { direction: 'in', at, source: 'whatsapp', event: { type: 'text', text: t }, providerId: `p${at}`, state: 'done', error: null };
}

const menu = list({
  body: 'How can we help?',
  button: 'Topics',
  sections: [
    { title: 'Service', rows: [{ id: 'wifi', title: 'Wi-Fi', description: 'No signal' }] },
    { title: 'Account', rows: [{ id: 'billing', title: 'Billing' }] },
  ],
});
const solved = buttons({
  body: 'Did that help?',
  buttons: [
    { id: 'yes', title: 'Yes' },
    { id: 'agent', title: 'Talk to a person' },
  ],
});

describe('lastOffered', () => {
  it('is null when the user was never offered a list or buttons', () => {
    expect(lastOffered([])).toBeNull();
    expect(lastOffered([said(1, 'hi'), out(2, text('Hello'))])).toBeNull();
  });

  it('gives the last offer with every choice (rows with their section) and the tap after it', () => {
    const offered = lastOffered([said(1, 'hi'), out(2, menu), tap(3, 'wifi', 'Wi-Fi', 'list'), out(4, solved), said(5, 'hmm'), tap(6, 'agent', 'Talk to a person')]);
    expect(offered).toMatchObject({ kind: 'buttons', from: 'bot', at: 4, body: 'Did that help?', tapped: { id: 'agent', title: 'Talk to a person', via: 'button', at: 6 } });
    expect(offered!.choices).toEqual([
      { id: 'yes', title: 'Yes' },
      { id: 'agent', title: 'Talk to a person' },
    ]);
    const first = lastOffered([out(2, menu), tap(3, 'billing', 'Billing', 'list')]);
    expect(first).toMatchObject({ kind: 'list', button: 'Topics', tapped: { id: 'billing', via: 'list' } });
    expect(first!.choices).toEqual([
      { id: 'wifi', title: 'Wi-Fi', description: 'No signal', section: 'Service' },
      { id: 'billing', title: 'Billing', section: 'Account' },
    ]);
    const rows = list({ body: 'Pick one', button: 'Open', rows: [{ id: 'a', title: 'A' }] });
    expect(lastOffered([out(1, rows)])).toMatchObject({ choices: [{ id: 'a', title: 'A' }], tapped: null });
    expect(lastOffered([out(1, rows)])!.choices[0]).not.toHaveProperty('section');
  });

  it('counts no tap before the offer, nor a tap on an older message, and the first answer wins', () => {
    expect(lastOffered([out(1, menu), tap(2, 'wifi', 'Wi-Fi'), out(3, solved)])!.tapped).toBeNull();
    expect(lastOffered([out(1, menu), out(3, solved), tap(4, 'wifi', 'Wi-Fi', 'list')])!.tapped).toBeNull();
    expect(lastOffered([out(1, solved), tap(2, 'yes', 'Yes'), tap(3, 'agent', 'Talk to a person')])!.tapped).toMatchObject({ id: 'yes' });
  });

  it('names the agent who offered it, and an SMS fallback of the offer is not a new offer', () => {
    const byAgent = out(5, buttons({ body: 'Refund or credit?', buttons: [{ id: 'refund', title: 'Refund' }] }), { agent: 'ana' });
    const fallback = out(6, text('Refund or credit? 1. Refund'), { fallbackOf: 5 });
    const o = lastOffered([out(1, solved), byAgent, fallback, tap(7, 'refund', 'Refund', 'sms')]);
    expect(o).toMatchObject({ from: 'agent', agent: 'ana', body: 'Refund or credit?', tapped: { id: 'refund', via: 'sms' } });
    const again = out(8, menu, { fallbackOf: 1 });
    expect(lastOffered([out(1, menu), again])).toMatchObject({ at: 1 });
  });
});
