import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PATHS } from '../../src/sandbox/index.js';
import { TO, documentButtonsRequest, flowRequest, imageButtonsRequest, listRequest, postMessage, start, videoButtonsRequest } from './helpers.js';

const variants = [
  ['a list message', listRequest],
  ['reply buttons with an image', imageButtonsRequest],
  ['reply buttons with a video', videoButtonsRequest],
  ['reply buttons with a document and its file name', documentButtonsRequest],
  ['a flow message with action.parameters', flowRequest],
] as const;

describe('POST messaging', () => {
  it.each(variants)('accepts %s and records it', async (_name, body) => {
    const { url, sandbox } = await start();
    const res = await postMessage(url, sandbox.issueToken(), body).expect(200);
    const id = res.body.messages[0].id as string;
    expect(id).toMatch(/^wamid\.[A-Za-z0-9_-]+$/);
    expect(sandbox.messages).toHaveLength(1);
    expect(sandbox.messages[0]).toMatchObject({ channel: 'interactive', from: body.from, to: TO, request: body, providerId: id });
    expect(sandbox.messagesTo(TO)).toHaveLength(1);
  });

  it('gives each message its own id', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    const a = await postMessage(url, token, listRequest).expect(200);
    const b = await postMessage(url, token, listRequest).expect(200);
    expect(a.body.messages[0].id).not.toBe(b.body.messages[0].id);
  });

  it('answers 400 code 100 listing every issue with its path', async () => {
    const { url, sandbox } = await start();
    const bad = {
      from: '+1 555',
      to: TO,
      type: 'interactive',
      listMessages: {
        body: 'Pick',
        buttonText: 'This button text is far too long',
        sections: [
          {
            title: 'A',
            messages: [
              { id: '1', title: 'x'.repeat(25) },
              { id: '1', title: 'Two' },
            ],
          },
        ],
        extra: true,
      },
    };
    const res = await postMessage(url, sandbox.issueToken(), bad).expect(400);
    expect(res.body.error.code).toBe(100);
    const paths = (res.body.error.issues as { path: (string | number)[] }[]).map((i) => i.path.join('.'));
    expect(paths.sort()).toEqual(['from', 'listMessages.buttonText', 'listMessages.extra', 'listMessages.sections.0.messages.0.title', 'listMessages.sections.0.messages.1.id', 'type']);
    expect(res.body.error.message).toContain('listMessages.buttonText');
    expect(sandbox.messages).toHaveLength(0);
  });

  it('reports a type that does not match the body object and a missing body object', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    const wrongType = await postMessage(url, token, { ...listRequest, type: 'interactive' }).expect(400);
    expect(wrongType.body.error.issues).toEqual([{ path: ['type'], message: expect.stringContaining('contacts') }]);
    const none = await postMessage(url, token, { from: listRequest.from, to: TO, type: 'interactive' }).expect(400);
    expect(none.body.error.issues[0].path).toEqual([]);
  });

  it('breaks the limits of provider.md §3 into issues (four buttons, an http image)', async () => {
    const { url, sandbox } = await start();
    const replyButtons = {
      headerImage: { link: 'http://example.com/a.jpg' },
      body: 'b',
      buttons: [1, 2, 3, 4].map((i) => ({ id: String(i), title: `B${i}` })),
    };
    const res = await postMessage(url, sandbox.issueToken(), { ...imageButtonsRequest, replyButtons }).expect(400);
    const paths = (res.body.error.issues as { path: unknown[] }[]).map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['replyButtons.headerImage.link', 'replyButtons.buttons']));
  });

  it('requires a JSON content type and a JSON body', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    const text = await request(url).post(SANDBOX_PATHS.messaging).set('Authorization', `Bearer ${token}`).type('text').send('hello').expect(415);
    expect(text.body.error.code).toBe(100);
    const broken = await request(url).post(SANDBOX_PATHS.messaging).set('Authorization', `Bearer ${token}`).type('json').send('{"from":').expect(400);
    expect(broken.body.error.message).toMatch(/not valid JSON/);
  });

  it('checks the bearer token before the body', async () => {
    const { url } = await start();
    await request(url).post(SANDBOX_PATHS.messaging).type('text').send('hello').expect(401);
  });

  it('restricts senders when told to', async () => {
    const { url, sandbox } = await start({ senders: ['15550000009'] });
    const res = await postMessage(url, sandbox.issueToken(), listRequest).expect(400);
    expect(res.body.error.issues).toEqual([{ path: ['from'], message: expect.stringContaining('not a sender') }]);
  });

  it('refuses a body larger than 1 MB with 413', async () => {
    const { url, sandbox } = await start();
    await postMessage(url, sandbox.issueToken(), { pad: 'x'.repeat(1_100_000) }).expect(413);
  });
});
