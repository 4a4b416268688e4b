import { describe, expect, it } from 'vitest';
import { SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER, SANDBOX_TEMPLATES, renderTemplate, type SandboxTemplate } from '../../src/sandbox/index.js';
import { fakeClock, start } from './helpers.js';
import { TO, expectGraphError, postCloud, template, changeValue, webhook } from './cloud-helpers.js';

const body = (...texts: string[]) => ({ type: 'body', parameters: texts.map((text) => ({ type: 'text', text })) });
const quick = (index: number, payload: string) => ({ type: 'button', sub_type: 'quick_reply', index: String(index), parameters: [{ type: 'payload', payload }] });

const promo: SandboxTemplate = {
  name: 'promo',
  language: 'es_MX',
  header: { type: 'image' },
  body: 'Hola {{1}}, tu pedido {{2}} está listo',
  footer: 'Pizzería',
  quickReplies: ['Sí', 'No'],
};

describe('Cloud API mode: templates', () => {
  it('accepts a known template outside any window and records its quick-reply payloads', async () => {
    const { url, sandbox } = await start({ cloudApi: { templates: [promo] } });
    const components = [{ type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/p.jpg' } }] }, body('Ana', '#12'), quick(0, 'yes-12'), quick(1, 'no-12')];
    const sent = template('promo', components, 'es_MX');
    const res = await postCloud(url, sent).expect(200);
    expect(res.body.messages[0].message_status).toBe('accepted');
    expect(sandbox.messages).toEqual([expect.objectContaining({ channel: 'cloud-api', type: 'template', numberId: SANDBOX_PHONE_NUMBER_ID, request: sent })]);
    expect(renderTemplate(promo, sent.template as never)).toEqual({
      header: { type: 'image', media: { link: 'https://example.com/p.jpg' } },
      body: 'Hola Ana, tu pedido #12 está listo',
      footer: 'Pizzería',
      buttons: [
        { text: 'Sí', payload: 'yes-12' },
        { text: 'No', payload: 'no-12' },
      ],
    });
  });

  it('knows a default set: colloquy_reopen, colloquy_reminder and colloquy_hello, in en and en_US', async () => {
    expect(SANDBOX_TEMPLATES.map((t) => `${t.name}/${t.language}`)).toEqual([
      'colloquy_reopen/en',
      'colloquy_reopen/en_US',
      'colloquy_reminder/en',
      'colloquy_reminder/en_US',
      'colloquy_hello/en',
      'colloquy_hello/en_US',
    ]);
    const { url, sandbox } = await start();
    await postCloud(url, template('colloquy_reopen', [body('Ana'), quick(0, 'reopen.yes')], 'en_US')).expect(200);
    await postCloud(url, template('colloquy_reminder', [body('your table at 8')])).expect(200);
    await postCloud(url, template('colloquy_hello', null)).expect(200);
    const [reopen, reminder] = sandbox.messages;
    expect(reopen?.channel === 'cloud-api' && sandbox.renderTemplate(reopen)).toEqual({
      body: 'Hi Ana, we have an update for you. Shall we continue?',
      buttons: [
        { text: 'Continue', payload: 'reopen.yes' },
        { text: 'Not now', payload: 'Not now' },
      ],
    });
    expect(reminder?.channel === 'cloud-api' && sandbox.renderTemplate(reminder)).toEqual({ body: 'Reminder: your table at 8', buttons: [{ text: 'OK', payload: 'OK' }] });
  });

  it('refuses an unknown name, or a known one in another language, with 132001 (404)', async () => {
    const { url, sandbox } = await start();
    expectGraphError(await postCloud(url, template('no_such')), 404, 132001, 'no_such');
    expectGraphError(await postCloud(url, template('colloquy_reopen', undefined, 'fr')), 404, 132001, 'exists in en, en_US');
    expect(sandbox.messages).toEqual([]);
  });

  it.each([
    ['no body parameters', [] as unknown[], 'no body component'],
    ['two body parameters for one', [body('a', 'b')], 'expects 1 parameter, got 2'],
    ['a quick reply the template lacks', [body('a'), quick(2, 'x')], 'has 2 quick-reply buttons, no button 2'],
    ['a URL button', [body('a'), { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'x' }] }], 'no URL button'],
  ])('refuses %s with 132000', async (_what, components, details) => {
    const { url } = await start();
    expectGraphError(await postCloud(url, template('colloquy_reopen', components)), 400, 132000, details);
  });

  it('refuses header parameters the template does not take, or of the wrong kind', async () => {
    const { url } = await start({ cloudApi: { templates: [promo, ...SANDBOX_TEMPLATES] } });
    const noHeader = template('colloquy_hello', [{ type: 'header', parameters: [{ type: 'text', text: 'x' }] }]);
    expectGraphError(await postCloud(url, noHeader), 400, 132000, 'header expects 0 parameters, got 1');
    const video = template('promo', [{ type: 'header', parameters: [{ type: 'video', video: { id: '1' } }] }, body('a', 'b')], 'es_MX');
    expectGraphError(await postCloud(url, video), 400, 132012, 'header is image, got video');
    expectGraphError(await postCloud(url, template('promo', [body('a', 'b')], 'es_MX')), 400, 132000, 'image header expects 1 parameter');
  });

  it('refuses a text parameter with a new line (131009) and a malformed component (131009, with its path)', async () => {
    const { url } = await start();
    expectGraphError(await postCloud(url, template('colloquy_reopen', [body('a\nb')])), 400, 131009, 'template.components[0].parameters[0].text: must not contain new lines');
    expectGraphError(await postCloud(url, template('colloquy_reopen', [{ type: 'body', parameters: [] }])), 400, 131009, 'template.components[0].parameters');
    expectGraphError(await postCloud(url, template('Bad-Name')), 400, 131009, 'template.name');
  });

  it('delivers a quick-reply tap as the Cloud API does: type button, the payload, and the template as context', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { statuses: false } });
    const res = await postCloud(url, template('colloquy_reopen', [body('Ana'), quick(0, 'reopen.yes')])).expect(200);
    const result = await sandbox.deliver.templateReply(TO, 'reopen.yes', 'Continue');
    expect(result.ok).toBe(true);
    const value = changeValue(hook.received[0]);
    expect(value.metadata).toEqual({ display_phone_number: SANDBOX_SENDER, phone_number_id: SANDBOX_PHONE_NUMBER_ID });
    expect(value.messages).toEqual([
      {
        from: TO,
        id: expect.stringMatching(/^wamid\./),
        timestamp: '1700000000',
        type: 'button',
        context: { from: SANDBOX_SENDER, id: res.body.messages[0].id },
        button: { payload: 'reopen.yes', text: 'Continue' },
      },
    ]);
    expect(sandbox.window(TO).open).toBe(true);
  });

  it('delivers a template reply from the control route', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ webhook: { url: hook.url }, cloudApi: { statuses: false } });
    await postCloud(url, template()).expect(200);
    const { default: request } = await import('supertest');
    await request(url).post('/_sandbox/deliver').send({ kind: 'template_reply', from: TO, payload: 'Continue', text: 'Continue' }).expect(200);
    expect(changeValue(hook.received[0]).messages[0]).toMatchObject({ type: 'button', button: { payload: 'Continue', text: 'Continue' }, context: { id: sandbox.messages[0]!.providerId } });
  });
});
