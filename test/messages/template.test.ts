import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/errors.js';
import { choicesOf, template } from '../../src/messages/index.js';

const quick = (index: string, payload: string) => ({ type: 'button' as const, sub_type: 'quick_reply' as const, index, parameters: [{ type: 'payload' as const, payload }] });

describe('template()', () => {
  it('builds the Cloud API template object, the language as a code', () => {
    const m = template({
      name: 'appointment_reminder',
      language: 'en_US',
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/clinic.png' } }] },
        { type: 'body', parameters: [{ type: 'text', text: 'Tuesday 10:00' }] },
        quick('1', 'cancel'),
        quick('0', 'confirm'),
      ],
      sms: 'Reminder: Tuesday 10:00. Reply 1 to confirm.',
    });
    expect(m).toMatchObject({ kind: 'template', template: { name: 'appointment_reminder', language: { code: 'en_US' } }, sms: expect.any(String) });
    // Quick replies come back as reply.<payload>, in button order.
    expect(choicesOf(m).map((c) => c.id)).toEqual(['confirm', 'cancel']);
  });

  it('lists every problem with its path', () => {
    let err: unknown;
    try {
      template({
        name: 'Appointment Reminder',
        language: 'english',
        components: [{ type: 'body', parameters: [{ type: 'text', text: '' }] }, quick('0', 'a\u0007b'), quick('0', 'again')],
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MessageValidationError);
    const paths = (err as MessageValidationError).issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['template.name', 'template.language.code', 'template.components.0.parameters.0.text', 'template.components.1.parameters.0.payload', 'template.components.2']),
    );
  });
});
