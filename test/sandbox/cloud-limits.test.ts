import { describe, expect, it } from 'vitest';
import { fakeClock, start } from './helpers.js';
import { buttons, expectGraphError, flow, list, postCloud, text, userWrites, webhook } from './cloud-helpers.js';

type Body = Record<string, any>;

/** A copy of `body` changed by `edit`. */
function edited(body: Body, edit: (b: Body) => void): Body {
  const copy = JSON.parse(JSON.stringify(body)) as Body;
  edit(copy);
  return copy;
}

const long = (n: number): string => 'x'.repeat(n);
const reply = (id: string, title: string) => ({ type: 'reply', reply: { id, title } });

describe('Cloud API mode: every limit of the message reference', () => {
  const cases: [string, Body, number, string][] = [
    ['messaging_product missing', edited(text(), (b) => delete b['messaging_product']), 131008, 'messaging_product: is required'],
    ['messaging_product wrong', edited(text(), (b) => (b['messaging_product'] = 'sms')), 131009, 'messaging_product'],
    ['to not digits', edited(text(), (b) => (b['to'] = '+52 55 1234')), 131009, 'to'],
    ['an unknown field', edited(text(), (b) => (b['priority'] = 'high')), 100, 'unknown field "priority"'],
    ['an unsupported type', edited(text(), (b) => (b['type'] = 'sticker')), 100, 'type'],
    ['text over 4096', text(long(4097)), 131009, 'text.body: must be at most 4096 characters (has 4097)'],
    ['empty text', text(''), 131009, 'text.body: must not be empty'],
    ['text missing', edited(text(), (b) => delete b['text']), 131008, 'text: is required'],
    ['list of 11 rows', list(11), 131009, 'interactive.action.sections[0].rows: a list has at most 10 rows in all'],
    [
      'list rows over 10 across sections',
      edited(list(6), (b) => b['interactive'].action.sections.push({ title: 'More', rows: list(5).interactive.action.sections[0]!.rows.map((r: Body) => ({ ...r, id: `m${r['id']}` })) })),
      131009,
      'has 11',
    ],
    ['list row title over 24', edited(list(), (b) => (b['interactive'].action.sections[0].rows[1].title = long(25))), 131009, 'interactive.action.sections[0].rows[1].title'],
    ['list row id over 200', edited(list(), (b) => (b['interactive'].action.sections[0].rows[0].id = long(201))), 131009, 'interactive.action.sections[0].rows[0].id'],
    ['list row description over 72', edited(list(), (b) => (b['interactive'].action.sections[0].rows[2].description = long(73))), 131009, 'rows[2].description'],
    ['list duplicate row ids', edited(list(), (b) => (b['interactive'].action.sections[0].rows[2].id = 'r0')), 131009, 'rows[2].id: row id "r0" is used more than once'],
    ['list button over 20', edited(list(), (b) => (b['interactive'].action.button = long(21))), 131009, 'interactive.action.button'],
    ['list section title over 24', edited(list(), (b) => (b['interactive'].action.sections[0].title = long(25))), 131009, 'sections[0].title'],
    [
      'list of two sections, one untitled',
      edited(list(2), (b) => b['interactive'].action.sections.push({ rows: [{ id: 'z', title: 'Z' }] })),
      131009,
      'interactive.action.sections[1].title: is required when a list has more than one section',
    ],
    ['list header over 60', edited(list(), (b) => (b['interactive'].header.text = long(61))), 131009, 'interactive.header.text'],
    ['list image header', edited(list(), (b) => (b['interactive'].header = { type: 'image', image: { id: '1' } })), 100, 'interactive.header: unknown field "image"'],
    ['list footer over 60', edited(list(), (b) => (b['interactive'].footer.text = long(61))), 131009, 'interactive.footer.text'],
    ['list body over 4096', edited(list(), (b) => (b['interactive'].body.text = long(4097))), 131009, 'interactive.body.text'],
    ['list without body', edited(list(), (b) => delete b['interactive'].body), 131008, 'interactive.body: is required'],
    ['an unknown interactive type', edited(list(), (b) => (b['interactive'].type = 'carousel')), 100, 'interactive.type'],
    ['no buttons', edited(buttons(), (b) => (b['interactive'].action.buttons = [])), 131009, 'interactive.action.buttons'],
    ['four buttons', edited(buttons(), (b) => b['interactive'].action.buttons.push(reply('a', 'A'), reply('b', 'B'))), 131009, 'interactive.action.buttons: has at most 3 buttons'],
    ['button title over 20', edited(buttons(), (b) => (b['interactive'].action.buttons[1].reply.title = long(21))), 131009, 'interactive.action.buttons[1].reply.title'],
    ['button id over 256', edited(buttons(), (b) => (b['interactive'].action.buttons[0].reply.id = long(257))), 131009, 'interactive.action.buttons[0].reply.id'],
    ['duplicate button ids', edited(buttons(), (b) => (b['interactive'].action.buttons[1].reply.id = 's')), 131009, 'buttons[1].reply.id: button id "s"'],
    ['duplicate button titles', edited(buttons(), (b) => (b['interactive'].action.buttons[1].reply.title = 'Small')), 131009, 'buttons[1].reply.title'],
    ['button body over 1024', edited(buttons(), (b) => (b['interactive'].body.text = long(1025))), 131009, 'interactive.body.text: must be at most 1024'],
    ['button type not reply', edited(buttons(), (b) => (b['interactive'].action.buttons[0].type = 'url')), 131009, 'interactive.action.buttons[0].type'],
    ['image header without link or id', buttons({ type: 'image', image: {} }), 131009, 'interactive.header.image'],
    ['image header with an ftp link', buttons({ type: 'image', image: { link: 'ftp://example.com/a.jpg' } }), 131009, 'interactive.header.image'],
    ['document header with a long filename', buttons({ type: 'document', document: { id: '1', filename: long(241) } }), 131009, 'interactive.header.document'],
    ['header text over 60', buttons({ type: 'text', text: long(61) }), 131009, 'interactive.header.text'],
    ['flow version 2', flow({ flow_message_version: '2' }), 131009, 'interactive.action.parameters.flow_message_version'],
    ['flow without token', flow({ flow_token: undefined }), 131008, 'interactive.action.parameters.flow_token: is required'],
    ['flow with both id and name', flow({ flow_name: 'booking' }), 131009, 'interactive.action.parameters.flow_id: give exactly one of flow_id and flow_name'],
    ['flow with neither id nor name', flow({ flow_id: undefined }), 131009, 'flow_id: give exactly one'],
    ['flow cta over 20', flow({ flow_cta: long(21) }), 131009, 'interactive.action.parameters.flow_cta'],
    ['flow cta with emoji', flow({ flow_cta: 'Book \u{1F355}' }), 131009, 'flow_cta: must not contain emoji'],
    ['navigate without payload', flow({ flow_action_payload: undefined }), 131009, 'interactive.action.parameters.flow_action_payload: is required when flow_action is "navigate"'],
    ['navigate without a screen', flow({ flow_action_payload: { data: { a: 1 } } }), 131008, 'flow_action_payload.screen: is required'],
    ['navigate with empty data', flow({ flow_action_payload: { screen: 'A', data: {} } }), 131009, 'flow_action_payload.data'],
    ['data_exchange with a payload', flow({ flow_action: 'data_exchange' }), 131009, 'flow_action_payload: must be omitted'],
    ['flow mode unknown', flow({ mode: 'live' }), 131009, 'interactive.action.parameters.mode'],
    ['flow action name wrong', edited(flow(), (b) => (b['interactive'].action.name = 'flows')), 131009, 'interactive.action.name'],
  ];

  it.each(cases)('refuses %s', async (_what, body, code, details) => {
    const hook = await webhook();
    const { url, sandbox } = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { statuses: false } });
    await userWrites(sandbox);
    const res = await postCloud(url, JSON.parse(JSON.stringify(body)));
    expectGraphError(res, 400, code, details);
    expect(sandbox.messages).toEqual([]);
    expect(sandbox.requestsTo('cloud-api')[0]?.status).toBe(400);
  });

  it('names every problem of a body, each with its path', async () => {
    const { url, sandbox } = await start();
    const bad = edited(buttons(), (b) => {
      b['interactive'].action.buttons[0].reply.title = long(21);
      b['interactive'].body.text = long(1025);
    });
    const res = await postCloud(url, bad);
    expectGraphError(res, 400, 131009, 'interactive.body.text');
    expect(res.body.error.error_data.details).toContain('interactive.action.buttons[0].reply.title');
    expect(sandbox.messages).toEqual([]);
  });
});
