import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/errors.js';
import { InteractiveRequestSchema, ListMessagesSchema, ReplyButtonsSchema, FlowSchema } from '../../src/messages/schema.js';
import { charLength, LIMITS } from '../../src/messages/limits.js';
import { parseOrThrow } from '../../src/messages/validate.js';
import { chars, issuesOf, seed, SEED_BUTTONS_DOCUMENT_JSON, SEED_BUTTONS_IMAGE_JSON, SEED_BUTTONS_VIDEO_JSON, SEED_FLOW_JSON, SEED_LIST_JSON, SEED_VARIANTS, pathsOf } from './fixtures.js';

const issues = (v: unknown) => issuesOf(InteractiveRequestSchema, v);
const paths = (v: unknown) => issues(v).map((i) => i.path);

/** `n` list rows with ids "1".."n" (offset by `from`). */
function rows(n: number, from = 1) {
  return Array.from({ length: n }, (_, i) => ({ id: String(from + i), title: `Row ${from + i}` }));
}

describe('the seed request variants', () => {
  for (const [name, json] of Object.entries(SEED_VARIANTS)) {
    it(`${name} validates and parses to itself`, () => {
      const value = seed(json);
      expect(issues(value)).toEqual([]);
      expect(InteractiveRequestSchema.parse(value)).toStrictEqual(value);
    });
  }

  it('the list variant has one section of 10 rows with numeric-text ids and type "contacts"', () => {
    const v = seed(SEED_LIST_JSON);
    expect(v.type).toBe('contacts');
    expect(v.listMessages.sections).toHaveLength(1);
    expect(v.listMessages.sections[0].messages).toHaveLength(10);
    for (const row of v.listMessages.sections[0].messages) expect(row.id).toMatch(/^[0-9]+$/);
  });

  it('the flow variant carries the seed parameters, product_price a number', () => {
    const p = seed(SEED_FLOW_JSON).flow.action.parameters;
    const parsed = InteractiveRequestSchema.parse(seed(SEED_FLOW_JSON));
    expect(parsed.flow?.action.name).toBe('flow');
    expect(parsed.flow?.action.parameters).toMatchObject({ mode: 'draft', flow_message_version: '3', flow_action: 'navigate' });
    expect(typeof p.flow_action_payload.data.product_price).toBe('number');
    expect(parsed.flow?.action.parameters.flow_action_payload?.data?.['product_price']).toBe(129.5);
  });
});

describe('the envelope', () => {
  it('needs one body object', () => {
    const v = seed(SEED_LIST_JSON);
    delete v.listMessages;
    expect(issues(v)).toEqual([{ path: '(root)', message: expect.stringContaining('exactly one of listMessages, replyButtons, flow is required (found none)') }]);
  });

  it('refuses two body objects, naming both', () => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.flow = seed(SEED_FLOW_JSON).flow;
    expect(issues(v)).toEqual([{ path: 'flow', message: expect.stringContaining('found replyButtons, flow') }]);
    const w = seed(SEED_LIST_JSON);
    w.replyButtons = seed(SEED_BUTTONS_VIDEO_JSON).replyButtons;
    expect(paths(w)).toEqual(['replyButtons']);
  });

  it('requires type "contacts" for a list', () => {
    const v = seed(SEED_LIST_JSON);
    v.type = 'interactive';
    expect(issues(v)).toEqual([{ path: 'type', message: 'must be "contacts" for listMessages (got "interactive")' }]);
  });

  it('requires type "interactive" for reply buttons and flows', () => {
    const b = seed(SEED_BUTTONS_DOCUMENT_JSON);
    b.type = 'contacts';
    expect(issues(b)).toEqual([{ path: 'type', message: 'must be "interactive" for replyButtons (got "contacts")' }]);
    const f = seed(SEED_FLOW_JSON);
    f.type = 'contacts';
    expect(issues(f)).toEqual([{ path: 'type', message: 'must be "interactive" for flow (got "contacts")' }]);
  });

  it('reports an unknown type once', () => {
    const v = seed(SEED_FLOW_JSON);
    v.type = 'text';
    expect(paths(v)).toEqual(['type']);
  });

  it('takes from and to as digits only', () => {
    const v = seed(SEED_LIST_JSON);
    v.from = '+5215512345678';
    v.to = '52 1 55 8765 4321';
    const found = issues(v);
    expect(found.map((i) => i.path)).toEqual(['from', 'to']);
    expect(found[0]!.message).toContain('digits only');
    const w = seed(SEED_LIST_JSON);
    w.to = '';
    expect(paths(w)).toEqual(['to']);
    const x = seed(SEED_LIST_JSON);
    delete x.from;
    expect(paths(x)).toEqual(['from']);
  });

  it('rejects unknown fields, naming the field', () => {
    const v = seed(SEED_LIST_JSON);
    v.listMessages.rows = v.listMessages.sections[0].messages;
    delete v.listMessages.sections;
    expect(issues(v)).toEqual([
      { path: 'listMessages.sections', message: expect.stringContaining('expected array') },
      { path: 'listMessages.rows', message: 'unknown field "rows"' },
    ]);
    const w = seed(SEED_BUTTONS_IMAGE_JSON);
    w.text = 'hello';
    w.replyButtons.buttons[0].payload = 'x';
    w.replyButtons.headerImage.caption = 'c';
    expect(paths(w).sort()).toEqual(['replyButtons.buttons[0].payload', 'replyButtons.headerImage.caption', 'text']);
  });
});

describe('media headers', () => {
  const withImage = (link: string) => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.replyButtons.headerImage.link = link;
    return v;
  };
  const withVideo = (link: string) => {
    const v = seed(SEED_BUTTONS_VIDEO_JSON);
    v.replyButtons.headerVideo.link = link;
    return v;
  };
  const withDocument = (link: string, fileName = 'catalog.pdf') => {
    const v = seed(SEED_BUTTONS_DOCUMENT_JSON);
    v.replyButtons.headerDocument = { link, fileName };
    return v;
  };

  it('need an https link', () => {
    expect(issues(withImage('http://cdn.example.com/a.jpg'))).toEqual([{ path: 'replyButtons.headerImage.link', message: 'must be an https URL (got http)' }]);
    expect(paths(withVideo('http://cdn.example.com/a.mp4'))).toEqual(['replyButtons.headerVideo.link']);
    expect(paths(withDocument('ftp://cdn.example.com/a.pdf'))).toEqual(['replyButtons.headerDocument.link']);
  });

  it('need a URL', () => {
    expect(issues(withImage('not a url'))).toEqual([{ path: 'replyButtons.headerImage.link', message: 'must be an absolute https URL' }]);
    expect(paths(withImage('/images/coffee.jpg'))).toEqual(['replyButtons.headerImage.link']);
    expect(paths(withImage(''))).toEqual(['replyButtons.headerImage.link']);
  });

  it('accept the allowed extensions, in any case, with a query string, or none', () => {
    for (const link of ['https://cdn.example.com/a.jpeg', 'https://cdn.example.com/a.PNG', 'https://cdn.example.com/a.jpg?size=large#top', 'https://cdn.example.com/images/coffee']) {
      expect(issues(withImage(link))).toEqual([]);
    }
    expect(issues(withVideo('https://cdn.example.com/a.3gp'))).toEqual([]);
    expect(issues(withVideo('https://cdn.example.com/a.3gpp'))).toEqual([]);
    for (const ext of ['pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'txt']) {
      expect(issues(withDocument(`https://cdn.example.com/file.${ext}`, `file.${ext}`))).toEqual([]);
    }
  });

  it('refuse a wrong extension for the kind of header', () => {
    expect(issues(withImage('https://cdn.example.com/a.gif'))).toEqual([{ path: 'replyButtons.headerImage.link', message: 'a image header must be jpg, jpeg, png (link ends in .gif)' }]);
    expect(paths(withImage('https://cdn.example.com/a.mp4'))).toEqual(['replyButtons.headerImage.link']);
    expect(paths(withVideo('https://cdn.example.com/a.mov'))).toEqual(['replyButtons.headerVideo.link']);
    expect(paths(withVideo('https://cdn.example.com/a.jpg'))).toEqual(['replyButtons.headerVideo.link']);
    expect(paths(withDocument('https://cdn.example.com/a.exe'))).toEqual(['replyButtons.headerDocument.link']);
    expect(paths(withDocument('https://cdn.example.com/a.pdf', 'setup.exe'))).toEqual(['replyButtons.headerDocument.fileName']);
  });

  it('reports an http link with a wrong extension twice on the same path', () => {
    expect(paths(withImage('http://cdn.example.com/a.gif'))).toEqual(['replyButtons.headerImage.link', 'replyButtons.headerImage.link']);
  });

  it('a document needs its file name', () => {
    const v = seed(SEED_BUTTONS_DOCUMENT_JSON);
    delete v.replyButtons.headerDocument.fileName;
    expect(paths(v)).toEqual(['replyButtons.headerDocument.fileName']);
    expect(paths(withDocument('https://cdn.example.com/a.pdf', ''))).toEqual(['replyButtons.headerDocument.fileName']);
  });

  it('an image header takes only a link', () => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.replyButtons.headerImage.fileName = 'coffee.jpg';
    expect(paths(v)).toEqual(['replyButtons.headerImage.fileName']);
  });
});

/** Sets a text field of a seed variant: `at` gets the body object and the value. */
interface TextLimit {
  readonly field: string;
  readonly max: number;
  readonly json: string;
  readonly set: (v: any, s: string) => void;
}

const TEXT_LIMITS: TextLimit[] = [
  { field: 'listMessages.headerText', max: 60, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.headerText = s) },
  { field: 'listMessages.footer', max: 60, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.footer = s) },
  { field: 'listMessages.body', max: 4096, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.body = s) },
  { field: 'listMessages.buttonText', max: 20, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.buttonText = s) },
  { field: 'listMessages.sections[0].title', max: 24, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.sections[0].title = s) },
  { field: 'listMessages.sections[0].messages[3].id', max: 200, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.sections[0].messages[3].id = s) },
  { field: 'listMessages.sections[0].messages[3].title', max: 24, json: SEED_LIST_JSON, set: (v, s) => (v.listMessages.sections[0].messages[3].title = s) },
  {
    field: 'listMessages.sections[0].messages[3].description',
    max: 72,
    json: SEED_LIST_JSON,
    set: (v, s) => (v.listMessages.sections[0].messages[3].description = s),
  },
  { field: 'replyButtons.buttons[1].id', max: 256, json: SEED_BUTTONS_IMAGE_JSON, set: (v, s) => (v.replyButtons.buttons[1].id = s) },
  { field: 'replyButtons.buttons[1].title', max: 20, json: SEED_BUTTONS_IMAGE_JSON, set: (v, s) => (v.replyButtons.buttons[1].title = s) },
  { field: 'replyButtons.body', max: 1024, json: SEED_BUTTONS_VIDEO_JSON, set: (v, s) => (v.replyButtons.body = s) },
  { field: 'replyButtons.footer', max: 60, json: SEED_BUTTONS_DOCUMENT_JSON, set: (v, s) => (v.replyButtons.footer = s) },
  { field: 'flow.action.parameters.flow_cta', max: 20, json: SEED_FLOW_JSON, set: (v, s) => (v.flow.action.parameters.flow_cta = s) },
];

describe('text limits (provider.md §3), counted in code points', () => {
  it('LIMITS holds the values of provider.md §3', () => {
    expect(LIMITS.list).toMatchObject({
      sections: { min: 1, max: 10 },
      rowsTotal: { min: 1, max: 10 },
      headerText: 60,
      footer: 60,
      body: 4096,
      buttonText: 20,
      sectionTitle: 24,
      rowId: 200,
      rowTitle: 24,
      rowDescription: 72,
    });
    expect(LIMITS.buttons).toMatchObject({ count: { min: 1, max: 3 }, id: 256, title: 20, body: 1024, footer: 60 });
    expect(LIMITS.flow.cta).toBe(20);
  });

  it('charLength counts code points, not UTF-16 units', () => {
    expect(charLength('😀')).toBe(1);
    expect('😀'.length).toBe(2);
    expect(charLength('añ😀b')).toBe(4);
    expect(charLength('')).toBe(0);
  });

  for (const t of TEXT_LIMITS) {
    it(`${t.field}: ${t.max} characters pass, ${t.max + 1} fail`, () => {
      const ok = seed(t.json);
      t.set(ok, chars(t.max));
      expect(issues(ok)).toEqual([]);
      const over = seed(t.json);
      t.set(over, chars(t.max + 1));
      expect(issues(over)).toEqual([{ path: t.field, message: `must be at most ${t.max} characters (has ${t.max + 1})` }]);
    });

    it(`${t.field}: must not be empty`, () => {
      const v = seed(t.json);
      t.set(v, '');
      expect(issues(v)).toEqual([{ path: t.field, message: 'must not be empty' }]);
    });
  }

  // The cta refuses emoji, so it is checked with accented letters (also outside ASCII, one code point each).
  for (const t of TEXT_LIMITS) {
    const unit = t.field.endsWith('flow_cta') ? 'ñ' : '😀';
    it(`${t.field}: ${t.max} × "${unit}" pass, ${t.max + 1} fail`, () => {
      const ok = seed(t.json);
      t.set(ok, chars(t.max, unit));
      expect(issues(ok)).toEqual([]);
      const over = seed(t.json);
      t.set(over, chars(t.max + 1, unit));
      expect(issues(over)).toEqual([{ path: t.field, message: `must be at most ${t.max} characters (has ${t.max + 1})` }]);
    });
  }

  it('a 20-emoji button title passes though it is 40 UTF-16 units', () => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.replyButtons.buttons[0].title = chars(20, '🎉');
    expect(v.replyButtons.buttons[0].title.length).toBe(40);
    expect(issues(v)).toEqual([]);
  });

  it('optional texts may be left out: header, footer, section title (one section), row description', () => {
    const v = seed(SEED_LIST_JSON);
    delete v.listMessages.headerText;
    delete v.listMessages.footer;
    delete v.listMessages.sections[0].title;
    for (const r of v.listMessages.sections[0].messages) delete r.description;
    expect(issues(v)).toEqual([]);
    const b = seed(SEED_BUTTONS_IMAGE_JSON);
    delete b.replyButtons.footer;
    delete b.replyButtons.headerImage;
    expect(issues(b)).toEqual([]);
  });

  it('required texts may not: body, buttonText, row id and title', () => {
    const v = seed(SEED_LIST_JSON);
    delete v.listMessages.body;
    delete v.listMessages.buttonText;
    delete v.listMessages.sections[0].messages[0].id;
    delete v.listMessages.sections[0].messages[1].title;
    expect(paths(v)).toEqual(['listMessages.body', 'listMessages.buttonText', 'listMessages.sections[0].messages[0].id', 'listMessages.sections[0].messages[1].title']);
  });
});

describe('list structure', () => {
  /** A list of `n` titled sections with the given row counts. */
  function listWith(counts: number[], titled = true) {
    const v = seed(SEED_LIST_JSON);
    let next = 1;
    v.listMessages.sections = counts.map((c, i) => {
      const s = { ...(titled && { title: `Section ${i + 1}` }), messages: rows(c, next) };
      next += c;
      return s;
    });
    return v;
  }

  it('takes 1 to 10 sections', () => {
    expect(issues(listWith([1]))).toEqual([]);
    expect(issues(listWith(Array(10).fill(1)))).toEqual([]);
    expect(issues(listWith([]))).toEqual([{ path: 'listMessages.sections', message: 'a list needs at least one section' }]);
  });

  it('refuses an 11th section', () => {
    // 11 sections of one row are also 11 rows: both limits are reported.
    const v = listWith(Array(11).fill(1));
    expect(issues(v)).toEqual([
      { path: 'listMessages.sections', message: 'a list has at most 10 sections (has 11)' },
      { path: 'listMessages.sections', message: 'a list has at most 10 rows in all sections (has 11)' },
    ]);
    const w = ListMessagesSchema.safeParse({ ...v.listMessages, sections: v.listMessages.sections.slice(0, 10) });
    expect(w.success).toBe(true);
  });

  it('over 10 sections, the sections are still checked', () => {
    const v = listWith(Array(11).fill(1));
    v.listMessages.sections[10].messages[0].title = chars(25);
    delete v.listMessages.sections[3].title;
    expect(paths(v)).toEqual(['listMessages.sections[10].messages[0].title', 'listMessages.sections', 'listMessages.sections', 'listMessages.sections[3].title']);
  });

  it('needs a title on every section when there is more than one', () => {
    const v = listWith([2, 3]);
    delete v.listMessages.sections[1].title;
    expect(issues(v)).toEqual([{ path: 'listMessages.sections[1].title', message: 'is required when a list has more than one section' }]);
    expect(paths(listWith([2, 3], false))).toEqual(['listMessages.sections[0].title', 'listMessages.sections[1].title']);
    expect(issues(listWith([10], false))).toEqual([]);
  });

  it('takes 1 to 10 rows in total across sections', () => {
    expect(issues(listWith([5, 5]))).toEqual([]);
    expect(issues(listWith([1, 2, 3, 4]))).toEqual([]);
    expect(issues(listWith([6, 5]))).toEqual([{ path: 'listMessages.sections', message: 'a list has at most 10 rows in all sections (has 11)' }]);
    expect(issues(listWith([11]))).toEqual([{ path: 'listMessages.sections', message: 'a list has at most 10 rows in all sections (has 11)' }]);
  });

  it('refuses a section without rows', () => {
    expect(issues(listWith([3, 0]))).toEqual([{ path: 'listMessages.sections[1].messages', message: 'a section needs at least one row' }]);
  });

  it('refuses duplicate row ids, within a section and across sections', () => {
    const v = listWith([3, 3]);
    v.listMessages.sections[0].messages[2].id = '1';
    v.listMessages.sections[1].messages[1].id = '2';
    expect(issues(v)).toEqual([
      { path: 'listMessages.sections[0].messages[2].id', message: 'duplicate row id "1" (also at sections[0].messages[0])' },
      { path: 'listMessages.sections[1].messages[1].id', message: 'duplicate row id "2" (also at sections[0].messages[1])' },
    ]);
  });

  it('allows duplicate row titles (only ids must be unique)', () => {
    const v = listWith([3]);
    for (const r of v.listMessages.sections[0].messages) r.title = 'Same';
    expect(issues(v)).toEqual([]);
  });
});

describe('reply button structure', () => {
  function withButtons(n: number) {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.replyButtons.buttons = Array.from({ length: n }, (_, i) => ({ id: String(i + 1), title: `Button ${i + 1}` }));
    return v;
  }

  it('takes 1 to 3 buttons', () => {
    expect(issues(withButtons(1))).toEqual([]);
    expect(issues(withButtons(3))).toEqual([]);
    expect(issues(withButtons(0))).toEqual([{ path: 'replyButtons.buttons', message: 'at least one button is required' }]);
    expect(issues(withButtons(4))).toEqual([{ path: 'replyButtons.buttons', message: 'at most 3 buttons are allowed (has 4)' }]);
  });

  it('over 3 buttons, the buttons are still checked', () => {
    const v = withButtons(4);
    v.replyButtons.buttons[3].id = '1';
    v.replyButtons.buttons[2].title = chars(21);
    expect(paths(v)).toEqual(['replyButtons.buttons[2].title', 'replyButtons.buttons', 'replyButtons.buttons[3].id']);
  });

  it('refuses duplicate ids and duplicate titles', () => {
    const v = withButtons(3);
    v.replyButtons.buttons[1].id = '1';
    v.replyButtons.buttons[2].title = 'Button 1';
    expect(issues(v)).toEqual([
      { path: 'replyButtons.buttons[1].id', message: 'duplicate button id "1" (also buttons[0])' },
      { path: 'replyButtons.buttons[2].title', message: 'duplicate button title "Button 1" (also buttons[0])' },
    ]);
  });

  it('takes at most one header', () => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    v.replyButtons.headerVideo = seed(SEED_BUTTONS_VIDEO_JSON).replyButtons.headerVideo;
    expect(issues(v)).toEqual([{ path: 'replyButtons.headerVideo', message: 'only one header is allowed (also has headerImage)' }]);
    const w = seed(SEED_BUTTONS_VIDEO_JSON);
    w.replyButtons.headerDocument = seed(SEED_BUTTONS_DOCUMENT_JSON).replyButtons.headerDocument;
    expect(paths(w)).toEqual(['replyButtons.headerDocument']);
  });

  it('validates the body object alone with seed-relative paths', () => {
    const r = ReplyButtonsSchema.safeParse({ body: 'b', buttons: [] });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path)).toEqual([['buttons']]);
  });
});

describe('flow parameters', () => {
  const withParams = (change: (p: any) => void) => {
    const v = seed(SEED_FLOW_JSON);
    change(v.flow.action.parameters);
    return v;
  };
  const P = 'flow.action.parameters';

  it('flow_message_version must be the string "3"', () => {
    expect(paths(withParams((p) => (p.flow_message_version = '2')))).toEqual([`${P}.flow_message_version`]);
    expect(paths(withParams((p) => (p.flow_message_version = 3)))).toEqual([`${P}.flow_message_version`]);
    expect(paths(withParams((p) => delete p.flow_message_version))).toEqual([`${P}.flow_message_version`]);
  });

  it('mode is draft or published', () => {
    expect(issues(withParams((p) => (p.mode = 'published')))).toEqual([]);
    expect(paths(withParams((p) => (p.mode = 'live')))).toEqual([`${P}.mode`]);
    expect(paths(withParams((p) => (p.mode = 'Draft')))).toEqual([`${P}.mode`]);
  });

  it('navigate needs a payload with a screen; data is optional', () => {
    expect(issues(withParams((p) => delete p.flow_action_payload))).toEqual([{ path: `${P}.flow_action_payload`, message: 'is required when flow_action is "navigate"' }]);
    expect(issues(withParams((p) => delete p.flow_action_payload.data))).toEqual([]);
    expect(paths(withParams((p) => delete p.flow_action_payload.screen))).toEqual([`${P}.flow_action_payload.screen`]);
    expect(paths(withParams((p) => (p.flow_action_payload.screen = '')))).toEqual([`${P}.flow_action_payload.screen`]);
  });

  it('data_exchange takes no payload', () => {
    expect(
      issues(
        withParams((p) => {
          p.flow_action = 'data_exchange';
          delete p.flow_action_payload;
        }),
      ),
    ).toEqual([]);
    expect(issues(withParams((p) => (p.flow_action = 'data_exchange')))).toEqual([{ path: `${P}.flow_action_payload`, message: 'must be absent when flow_action is "data_exchange"' }]);
  });

  it('flow_action is navigate or data_exchange', () => {
    expect(paths(withParams((p) => (p.flow_action = 'open')))).toEqual([`${P}.flow_action`]);
  });

  it('flow_cta refuses emoji, including flags and keycaps, but takes accented letters', () => {
    for (const cta of ['👉 Order', 'Order ☕', 'Order 🇲🇽', 'Press 1️⃣', '❤️']) {
      expect(issues(withParams((p) => (p.flow_cta = cta)))).toEqual([{ path: `${P}.flow_cta`, message: 'must not contain emoji' }]);
    }
    expect(issues(withParams((p) => (p.flow_cta = 'Reservá ahora')))).toEqual([]);
    expect(issues(withParams((p) => (p.flow_cta = 'Pedir (2) – 50% off!')))).toEqual([]);
  });

  it('flow_id and flow_token are required and not empty', () => {
    expect(paths(withParams((p) => (p.flow_id = '')))).toEqual([`${P}.flow_id`]);
    expect(paths(withParams((p) => delete p.flow_token))).toEqual([`${P}.flow_token`]);
  });

  it('action.name must be "flow"; unknown parameters are refused', () => {
    const v = seed(SEED_FLOW_JSON);
    v.flow.action.name = 'form';
    v.flow.action.parameters.flow_version = '3';
    expect(issues(v)).toEqual([
      { path: 'flow.action.name', message: expect.stringContaining('"flow"') },
      { path: 'flow.action.parameters.flow_version', message: 'unknown field "flow_version"' },
    ]);
  });

  it('payload data keeps any JSON values', () => {
    const r = FlowSchema.parse(seed(SEED_FLOW_JSON).flow);
    expect(r.action.parameters.flow_action_payload?.data).toEqual({
      product_name: 'Coffee',
      product_description: 'Ground coffee, 500 g',
      product_price: 129.5,
    });
  });
});

describe('every problem is reported', () => {
  it('a list with three different errors gives three issues, each with its path, all named in the message', () => {
    const v = seed(SEED_LIST_JSON);
    v.listMessages.headerText = chars(61);
    v.listMessages.sections[0].messages[4].title = chars(25);
    v.listMessages.sections[0].messages[9].id = '1';
    const err = (() => {
      try {
        parseOrThrow(InteractiveRequestSchema, v);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(MessageValidationError);
    const e = err as MessageValidationError;
    expect(e.code).toBe('message_invalid');
    expect(pathsOf(e.issues)).toEqual(['listMessages.headerText', 'listMessages.sections[0].messages[4].title', 'listMessages.sections[0].messages[9].id']);
    expect(e.message).toContain('(3 problems)');
    expect(e.message).toContain('listMessages.headerText: must be at most 60 characters (has 61)');
    expect(e.message).toContain('listMessages.sections[0].messages[4].title: must be at most 24 characters (has 25)');
    expect(e.message).toContain('listMessages.sections[0].messages[9].id: duplicate row id "1" (also at sections[0].messages[0])');
  });

  it('cross-field problems are reported even when a field is missing or mistyped', () => {
    const v = seed(SEED_LIST_JSON);
    v.type = 'interactive';
    v.listMessages.sections.push({ messages: rows(1, 11) });
    delete v.listMessages.sections[0].messages[0].title;
    v.listMessages.sections[0].messages[1].id = 2;
    v.listMessages.sections[0].messages[3].id = '3';
    expect(issues(v)).toEqual([
      { path: 'listMessages.sections[0].messages[0].title', message: expect.stringContaining('expected string') },
      { path: 'listMessages.sections[0].messages[1].id', message: expect.stringContaining('expected string') },
      { path: 'listMessages.sections', message: 'a list has at most 10 rows in all sections (has 11)' },
      { path: 'listMessages.sections[1].title', message: 'is required when a list has more than one section' },
      { path: 'listMessages.sections[0].messages[3].id', message: 'duplicate row id "3" (also at sections[0].messages[2])' },
      { path: 'type', message: 'must be "contacts" for listMessages (got "interactive")' },
    ]);
  });

  it('reply buttons: a missing body does not hide duplicate ids or a second header', () => {
    const v = seed(SEED_BUTTONS_IMAGE_JSON);
    delete v.replyButtons.body;
    v.replyButtons.headerDocument = { link: 'https://cdn.example.com/a.pdf', fileName: 'a.pdf' };
    v.replyButtons.buttons[2].id = '1';
    expect(paths(v)).toEqual(['replyButtons.body', 'replyButtons.headerDocument', 'replyButtons.buttons[2].id']);
  });

  it('flow: a mistyped field does not hide a missing navigate payload', () => {
    const v = seed(SEED_FLOW_JSON);
    v.flow.action.parameters.flow_id = 1234;
    delete v.flow.action.parameters.flow_action_payload;
    expect(paths(v)).toEqual(['flow.action.parameters.flow_id', 'flow.action.parameters.flow_action_payload']);
  });

  it('envelope, type and body problems come together', () => {
    const v = seed(SEED_BUTTONS_VIDEO_JSON);
    v.from = '+52';
    v.type = 'contacts';
    v.replyButtons.headerVideo.link = 'http://cdn.example.com/v.avi';
    v.replyButtons.buttons.push({ id: '4', title: 'Four' });
    expect(paths(v)).toEqual(['from', 'replyButtons.headerVideo.link', 'replyButtons.headerVideo.link', 'replyButtons.buttons', 'type']);
  });

  it('a body object of the wrong type is one issue, not a crash', () => {
    const v = seed(SEED_LIST_JSON);
    v.listMessages = 'hello';
    expect(paths(v)).toEqual(['listMessages']);
    const w = seed(SEED_LIST_JSON);
    w.listMessages.sections = [null, 'x'];
    expect(paths(w)).toEqual(['listMessages.sections[0]', 'listMessages.sections[1]']);
    const b = seed(SEED_BUTTONS_IMAGE_JSON);
    b.replyButtons.buttons = [null, { id: '1' }, { id: '1', title: 7 }];
    expect(paths(b)).toEqual(['replyButtons.buttons[0]', 'replyButtons.buttons[1].title', 'replyButtons.buttons[2].title', 'replyButtons.buttons[2].id']);
  });
});

describe('ids a tap sends back', () => {
  const astral = '\u{1F355}'; // one code point, two UTF-16 units

  it('refuses a button id, a row id or a flow token the webhook could not take back, naming the field', () => {
    const b = seed(SEED_BUTTONS_IMAGE_JSON);
    b.replyButtons.buttons[0].id = 'small\tcrust';
    expect(paths(b)).toEqual(['replyButtons.buttons[0].id']);
    const l = seed(SEED_LIST_JSON);
    l.listMessages.sections[0].messages[1].id = 'row\u0000';
    expect(paths(l)).toEqual(['listMessages.sections[0].messages[1].id']);
    const f = seed(SEED_FLOW_JSON);
    f.flow.action.parameters.flow_token = 'tok\ud800';
    expect(paths(f)).toEqual(['flow.action.parameters.flow_token']);
  });

  it('counts an id by code points, as the provider does: 256 pizzas make a valid button id', () => {
    const b = seed(SEED_BUTTONS_IMAGE_JSON);
    b.replyButtons.buttons[0].id = astral.repeat(LIMITS.buttons.id);
    expect(issues(b)).toEqual([]);
    b.replyButtons.buttons[0].id = astral.repeat(LIMITS.buttons.id + 1);
    expect(paths(b)).toEqual(['replyButtons.buttons[0].id']);
  });
});
