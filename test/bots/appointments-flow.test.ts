/**
 * The appointments bot's live flow as WhatsApp walks it: a real server with the sandbox, the
 * bot's taps delivered through the webhook, and the flow's screens requested from `POST /flows` by
 * `FlowClient` (encrypted with the sandbox's endpoint key, signed with the app secret). Also the
 * calendar's pure functions the screens are built from.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { FlowClient } from '../../src/simulator/testing.js';
import { createAppointmentsBot, dayTitle, freeTimes, isFree, nextWeekdays } from '../../bots/appointments.js';
import { eventually } from '../support/eventually.js';

const SECRET = 'appointments-flow-secret';
/** Thursday 26 November 2026, mid-morning UTC. */
const TODAY = new Date('2026-11-26T10:15:00Z');
const TIMES = ['09:00', '10:00', '11:30', '13:00', '14:30', '16:00', '17:30'];

describe('the booking calendar', () => {
  it('offers the next five weekdays after a date, skipping the weekend, with ids and titles', () => {
    expect(nextWeekdays(TODAY)).toEqual([
      { id: '2026-11-27', title: 'Fri 27 Nov' },
      { id: '2026-11-30', title: 'Mon 30 Nov' },
      { id: '2026-12-01', title: 'Tue 1 Dec' },
      { id: '2026-12-02', title: 'Wed 2 Dec' },
      { id: '2026-12-03', title: 'Thu 3 Dec' },
    ]);
    expect(nextWeekdays(new Date('2026-12-31T23:59:00Z'), 2).map((d) => d.id)).toEqual(['2027-01-01', '2027-01-04']);
  });

  it('has a deterministic set of free times each day, some taken, none on a date that is not one', () => {
    const day = '2026-11-27';
    expect(freeTimes(day)).toEqual(freeTimes(day));
    expect(freeTimes(day).length).toBeGreaterThan(2);
    expect(freeTimes(day).length).toBeLessThan(TIMES.length);
    expect(freeTimes(day).every((t) => TIMES.includes(t))).toBe(true);
    expect(freeTimes('2026-11-28')).not.toEqual(freeTimes(day));
    expect(isFree(day, freeTimes(day)[0]!)).toBe(true);
    expect(isFree(day, TIMES.find((t) => !freeTimes(day).includes(t))!)).toBe(false);
    expect(freeTimes('2026-02-30')).toEqual([]);
    expect(freeTimes('tomorrow')).toEqual([]);
    expect(dayTitle('2026-02-30')).toBeUndefined();
  });
});

describe('appointments: the live booking flow through POST /flows', () => {
  let server: RunningServer;
  let client: FlowClient;
  let n = 0;

  beforeAll(async () => {
    const bot = createAppointmentsBot({ today: () => TODAY });
    server = await startServer({ bots: [bot], config: { ...loadConfig({ HOST: '127.0.0.1', COLLOQUY_WEBHOOK_SECRET: SECRET }), port: 0, db: ':memory:' } });
    client = new FlowClient({ url: `${server.url}/flows`, publicKey: server.flowPublicKey!(), appSecret: SECRET });
  });
  afterAll(() => server?.close());

  const sentTo = (to: string) => server.sandbox!.messagesTo(to).map((m) => JSON.stringify(m.request));
  const to = { to: '15550000002' };

  /** A new user: hi → Haircut → Other times; resolves to the user and the flow's token. */
  async function openFlow(): Promise<{ user: string; token: string }> {
    const user = `1555700${String(++n).padStart(4, '0')}`;
    await server.sandbox!.deliver.text(user, 'hi', to);
    await eventually(() => expect(sentTo(user)).toHaveLength(1));
    await server.sandbox!.deliver.listReply(user, { id: 'haircut', title: 'Haircut' }, to);
    await eventually(() => expect(sentTo(user).at(-1)).toContain('Other times'));
    await server.sandbox!.deliver.buttonReply(user, { id: 'more', title: 'Other times' }, to);
    const token = await eventually(() => {
      const t = sentTo(user)
        .at(-1)
        ?.match(/"flow_token":"([^"]+)"/)?.[1];
      expect(t).toBeDefined();
      return t!;
    });
    expect(sentTo(user).at(-1)).toContain('"flow_action":"data_exchange"');
    expect(sentTo(user).at(-1)).toContain('"flow_cta":"See times"');
    return { user, token };
  }

  it('opens on the days, then that day’s free times, then a confirmation; the booking runs once and closes the flow', async () => {
    const { user, token } = await openFlow();
    expect(await client.init(token)).toMatchObject({ status: 200, body: { screen: 'DAYS', data: { days: nextWeekdays(TODAY) } } });
    const day = '2026-12-01';
    const slots = freeTimes(day).map((t) => ({ id: t, title: t }));
    expect(await client.submit(token, 'DAYS', { day })).toMatchObject({ status: 200, body: { screen: 'SLOTS', data: { day, day_title: 'Tue 1 Dec', slots } } });

    const taken = TIMES.find((t) => !isFree(day, t))!;
    expect(await client.submit(token, 'SLOTS', { day, slot: taken })).toMatchObject({
      status: 200,
      body: { screen: 'SLOTS', data: { error_message: 'Sorry, that time was just taken. Pick another one.', slots } },
    });
    const time = slots[1]!.id;
    expect(await client.submit(token, 'SLOTS', { day, slot: time })).toMatchObject({
      status: 200,
      body: { screen: 'CONFIRM', data: { day, slot: time, summary: `Haircut (30 min) on Tue 1 Dec at ${time}` } },
    });

    const booking = `SN-20261201-${time.replace(':', '')}`;
    const done = await client.submit(token, 'CONFIRM', { day, slot: time });
    expect(done).toMatchObject({ status: 200, body: { screen: 'SUCCESS', data: { extension_message_response: { params: { flow_token: token, booking } } } } });
    // WhatsApp retries with a new AES key and IV: the stored answer, no second booking.
    expect((await client.replay()).body).toEqual(done.body);
    const booked = () => sentTo(user).filter((m) => m.includes('Booked:'));
    await eventually(() => expect(booked()).toHaveLength(1));
    expect(booked()[0]).toContain(`Booked: Haircut, Tue 1 Dec ${time}. See you at Studio Nova!`);

    // Then the nfm_reply with the same token: nothing more is sent, no new conversation starts.
    await server.sandbox!.deliver.flowReply(user, { flowToken: token, data: { booking } }, to);
    await server.runtime.idle();
    expect(booked()).toHaveLength(1);
    expect(sentTo(user)).toHaveLength(4);
    const convs = await server.store.conversations({ botId: 'appointments', user });
    expect(convs.map((c) => [c.state, c.status])).toEqual([['booked', 'done']]);
    expect(await client.init(token)).toMatchObject({ status: 427, body: { error_msg: 'These times are out of date. Send us a message to see the free times again.' } });
  });

  it('refuses a day it does not offer, and a time taken by the time the booking is confirmed', async () => {
    const { user, token } = await openFlow();
    expect(await client.submit(token, 'DAYS', { day: '2026-11-28' })).toMatchObject({ body: { screen: 'DAYS', data: { error_message: 'Pick one of the days shown.' } } });
    expect(await client.submit(token, 'DAYS', { day: '2026-11-20' })).toMatchObject({ body: { screen: 'DAYS', data: { error_message: 'Pick one of the days shown.' } } });
    const day = '2026-11-27';
    const taken = TIMES.find((t) => !isFree(day, t))!;
    expect(await client.submit(token, 'CONFIRM', { day, slot: taken })).toMatchObject({ body: { screen: 'CONFIRM', data: { error_message: expect.stringContaining('just taken') } } });
    await server.runtime.idle();
    expect(sentTo(user).filter((m) => m.includes('Booked:'))).toHaveLength(0);
    expect((await server.store.activeConversation({ botId: 'appointments', user }))?.state).toBe('picking');
  });

  it('a tap on a quick slot while the form is open moves on: the form’s token no longer opens it (427)', async () => {
    const { user, token } = await openFlow();
    await server.sandbox!.deliver.buttonReply(user, { id: 'slot1', title: 'Tue 10:00' }, to);
    await eventually(() => expect(sentTo(user).at(-1)).toContain('Shall I book it?'));
    expect((await client.init(token)).status).toBe(427);
  });

  it('"Other times" tapped again sends a fresh form; the one before stops opening (427 with the bot’s text)', async () => {
    const { user, token } = await openFlow();
    await server.sandbox!.deliver.buttonReply(user, { id: 'more', title: 'Other times' }, to);
    const fresh = await eventually(() => {
      const tokens = sentTo(user).flatMap((r) => r.match(/"flow_token":"([^"]+)"/)?.[1] ?? []);
      expect(tokens).toHaveLength(2);
      return tokens[1]!;
    });
    expect(fresh).not.toBe(token);
    expect(await client.init(token)).toMatchObject({ status: 427, body: { error_msg: expect.stringContaining('out of date') } });
    expect(await client.init(fresh)).toMatchObject({ status: 200, body: { screen: 'DAYS' } });
  });
});
