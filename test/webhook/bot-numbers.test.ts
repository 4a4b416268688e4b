/** BotNumbers with a numbers file: which bot each phone_number_id and display number reaches, and the clashes refused at start. */
import { describe, expect, it } from 'vitest';
import { defineBot } from '../../src/conversation/index.js';
import { ConfigError } from '../../src/errors.js';
import { parseNumbers } from '../../src/numbers/index.js';
import { BotNumbers } from '../../src/webhook/index.js';
import orderBot, { machine } from '../fixtures/order-bot.js';

const DEFAULT = '15550000001';
const twoBot = defineBot({ id: 'order-two', machine });

const file = (numbers: unknown[]) => parseNumbers({ numbers }, { file: 'numbers.json', env: {} });
const entry = (phoneNumberId: string, displayNumber: string, bot: string) => ({ phoneNumberId, displayNumber, bot });

describe('BotNumbers with a numbers file', () => {
  it('maps each phone_number_id and display number to its bot; bots outside the file keep the default sender', () => {
    const numbers = new BotNumbers([orderBot, twoBot], DEFAULT, file([entry('11', '+1 555 000 2222', 'order-two'), entry('12', '15550003333', 'order-two')]));
    expect(numbers.botIdOf({ phone_number_id: '11', display_phone_number: DEFAULT })).toBe('order-two');
    expect(numbers.botIdOf({ phone_number_id: '12', display_phone_number: 'whatever' })).toBe('order-two');
    expect(numbers.botIdOf({ phone_number_id: '99', display_phone_number: '+1 555 000 3333' })).toBe('order-two');
    expect(numbers.botIdOf({ display_phone_number: DEFAULT })).toBe('order');
    expect(numbers.botIdOf({ phone_number_id: '99', display_phone_number: '19998887777' })).toBeUndefined();
    expect(numbers.numbers.sort()).toEqual([DEFAULT, '15550002222', '15550003333'].sort());
  });

  it('lets bots without a sender of their own share a deployment when the file gives each its numbers', () => {
    const numbers = new BotNumbers([orderBot, twoBot], DEFAULT, file([entry('11', '15550002222', 'order'), entry('12', '15550003333', 'order-two')]));
    expect(numbers.serves(DEFAULT)).toBe(false);
    expect(numbers.botIdFor('15550002222')).toBe('order');
    expect(() => new BotNumbers([orderBot, twoBot], DEFAULT)).toThrow('bots "order" and "order-two" both use the number 15550000001');
  });

  it('refuses a file naming a bot that is not served, naming it and the served ones', () => {
    expect(() => new BotNumbers([orderBot], DEFAULT, file([entry('11', '15550002222', 'pizza')]))).toThrow('numbers[0].bot: no served bot is "pizza" (served: order)');
  });

  it("refuses a file number that is another bot's sender or phoneNumberId", () => {
    const withSender = defineBot({ id: 'order-two', machine, options: { sender: '15550002222' } });
    expect(() => new BotNumbers([orderBot, withSender], DEFAULT, file([entry('11', '+1 555 000 2222', 'order')]))).toThrow('bots "order" and "order-two" both use the number 15550002222');
    const withId = defineBot({ id: 'order-two', machine, options: { sender: '15550009999', phoneNumberId: '11' } });
    let error: unknown;
    try {
      new BotNumbers([orderBot, withId], DEFAULT, file([entry('11', '15550002222', 'order')]));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('phoneNumberId: bots "order" and "order-two" both use the phone_number_id 11: inbound messages could not be routed');
  });
});
