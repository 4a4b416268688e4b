import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER, SANDBOX_TEMPLATES, SANDBOX_WINDOW_MS, createSandbox } from '../../src/sandbox/index.js';
import { start } from './helpers.js';

describe('Cloud API mode: settings', () => {
  it('defaults to one number (the sandbox own), the default templates, 24 hours, sync window errors and statuses', () => {
    const sandbox = createSandbox();
    expect(sandbox.cloudApi).toEqual({
      token: SANDBOX_CLOUD_API_TOKEN,
      numbers: [{ phoneNumberId: SANDBOX_PHONE_NUMBER_ID, displayNumber: SANDBOX_SENDER }],
      templates: SANDBOX_TEMPLATES,
      windowMs: SANDBOX_WINDOW_MS,
      windowErrors: 'sync',
      statuses: true,
    });
    expect(createSandbox({ sender: '15559990000', phoneNumberId: '42' }).cloudApi.numbers).toEqual([{ phoneNumberId: '42', displayNumber: '15559990000' }]);
  });

  it.each([
    [{ token: 'has spaces' }, 'cloudApi.token'],
    [{ numbers: [] }, 'cloudApi.numbers'],
    [{ numbers: [{ phoneNumberId: 'abc', displayNumber: '1555' }] }, 'cloudApi.numbers[0].phoneNumberId'],
    [
      {
        numbers: [
          { phoneNumberId: '1', displayNumber: '1555' },
          { phoneNumberId: '1', displayNumber: '1556' },
        ],
      },
      'cloudApi.numbers[1].phoneNumberId',
    ],
    [{ numbers: [{ phoneNumberId: '1', displayNumber: '+1555' }] }, 'cloudApi.numbers[0].displayNumber'],
    [{ templates: [{ name: 'Bad', language: 'en', body: 'x' }] }, 'cloudApi.templates[0].name'],
    [{ templates: [{ name: 'ok', language: 'english', body: 'x' }] }, 'cloudApi.templates[0].language'],
    [{ windowMs: 0 }, 'cloudApi.windowMs'],
    [{ windowErrors: 'later' as never }, 'cloudApi.windowErrors'],
  ])('refuses %j naming %s', (cloudApi, name) => {
    let caught: unknown;
    try {
      createSandbox({ cloudApi });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain(name);
  });

  it('shows the Cloud API mode in the control index and at /_sandbox/cloud', async () => {
    const { url } = await start();
    const index = await request(url).get('/_sandbox/').expect(200);
    expect(index.body.cloudApi).toEqual({
      route: 'POST /cloud/{version}/{phone_number_id}/messages',
      baseUrl: '/cloud/v23.0',
      token: SANDBOX_CLOUD_API_TOKEN,
      numbers: `${SANDBOX_PHONE_NUMBER_ID} (${SANDBOX_SENDER})`,
    });
    const cloud = await request(url).get('/_sandbox/cloud').expect(200);
    expect(cloud.body.templates).toHaveLength(SANDBOX_TEMPLATES.length);
  });
});
