import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { buttons, flow, list, sms, text } from '../../src/messages/builders.js';
import { GSM7_BASIC, GSM7_EXTENSION, analyzeSms, isGsm7, splitSms } from '../../src/messages/gsm.js';
import { choicesOf } from '../../src/messages/message.js';
import { matchSmsReply, renderSms, renderSmsDetailed } from '../../src/messages/sms.js';

const a = (n: number): string => 'a'.repeat(n);
const o = (n: number): string => 'ő'.repeat(n);

describe('GSM-7 detection', () => {
  it('holds the 127 characters of the 03.38 default alphabet and the 10 of its extension table', () => {
    expect([...GSM7_BASIC]).toHaveLength(127);
    expect([...GSM7_EXTENSION]).toHaveLength(10);
  });

  it('takes ñ, Ç, €, Greek capitals and line breaks as GSM-7', () => {
    expect(isGsm7('Año Ñoño ¿qué? ¡Sì! Ç €5 ΔΩ\n§')).toBe(true);
    expect(analyzeSms('mañana').encoding).toBe('gsm7');
  });

  it('needs UCS-2 for ő, ç, á, í, ó, ú, an en dash, … and emoji', () => {
    for (const s of ['ő', 'ç', 'á', 'í', 'ó', 'ú', '–', '…', '😀', 'ñ😀']) expect(analyzeSms(s).encoding).toBe('ucs2');
  });

  it('counts extension characters twice', () => {
    expect(analyzeSms('| ^ € { } [ ] ~ \\ \f').units).toBe(10 * 2 + 9);
    expect(analyzeSms('€'.repeat(80))).toEqual({ encoding: 'gsm7', units: 160, segments: 1, perSegment: 160 });
    expect(analyzeSms('€'.repeat(81)).segments).toBe(2);
  });

  it('counts UTF-16 code units for UCS-2', () => {
    expect(analyzeSms('😀').units).toBe(2);
    expect(analyzeSms(`ő😀`).units).toBe(3);
  });
});

describe('segments', () => {
  it.each([
    [0, 1, 160],
    [160, 1, 160],
    [161, 2, 153],
    [153 * 2, 2, 153],
    [153 * 2 + 1, 3, 153],
    [153 * 3, 3, 153],
    [153 * 3 + 1, 4, 153],
  ])('GSM-7 %i septets → %i part(s) of %i', (n, segments, perSegment) => {
    expect(analyzeSms(a(n))).toEqual({ encoding: 'gsm7', units: n, segments, perSegment });
  });

  it.each([
    [70, 1, 70],
    [71, 2, 67],
    [67 * 2, 2, 67],
    [67 * 2 + 1, 3, 67],
  ])('UCS-2 %i units → %i part(s) of %i', (n, segments, perSegment) => {
    expect(analyzeSms(o(n))).toEqual({ encoding: 'ucs2', units: n, segments, perSegment });
  });

  it('does not split an extension character across parts', () => {
    const s = `${a(152)}€${a(152)}`; // 306 septets, yet three parts: the € cannot straddle
    expect(analyzeSms(s).segments).toBe(3);
    const parts = splitSms(s);
    expect(parts.map((p) => p.length)).toEqual([152, 152, 1]);
    expect(parts.join('')).toBe(s);
  });

  it('does not split a surrogate pair across parts', () => {
    const s = `${o(66)}😀${o(4)}`; // 72 units
    const parts = splitSms(s);
    expect(parts).toEqual([o(66), `😀${o(4)}`]);
    expect(analyzeSms(s).segments).toBe(2);
    expect(analyzeSms(`${o(66)}😀`).segments).toBe(1);
  });
});

const sizes = () =>
  list({
    header: 'Coffee',
    body: 'Which size?',
    footer: 'Prices include tax',
    button: 'Sizes',
    rows: [
      { id: 's', title: 'Small', description: '250 ml' },
      { id: 'l', title: 'Large', description: '500 ml' },
      { id: 'x', title: 'Extra large' },
    ],
  });

describe('renderSms', () => {
  it('renders a list with one section', () => {
    expect(renderSms(sizes())).toBe('Coffee\nWhich size?\n\n1. Small - 250 ml\n2. Large - 500 ml\n3. Extra large\n\nPrices include tax\nReply with a number.');
  });

  it('renders a list with several sections under their titles, numbered throughout', () => {
    const m = list({
      body: 'What would you like?',
      button: 'Menu',
      sections: [
        {
          title: 'Drinks',
          rows: [
            { id: 'c', title: 'Coffee' },
            { id: 't', title: 'Tea', description: 'Green or black' },
          ],
        },
        { title: 'Food', rows: [{ id: 'b', title: 'Bagel' }] },
      ],
    });
    expect(renderSms(m)).toBe('What would you like?\n\nDrinks\n1. Coffee\n2. Tea - Green or black\n\nFood\n3. Bagel\n\nReply with a number.');
  });

  const yesNo = [
    { id: 'y', title: 'Yes' },
    { id: 'n', title: 'No' },
  ];

  it('renders reply buttons with an image header', () => {
    const m = buttons({ image: 'https://x.test/menu.png', body: 'Our menu. Order?', footer: 'Open 9-5', buttons: yesNo });
    expect(renderSms(m)).toBe('Our menu. Order?\nhttps://x.test/menu.png\n\n1. Yes\n2. No\n\nOpen 9-5\nReply with a number.');
  });

  it('renders reply buttons with a video header', () => {
    const m = buttons({ video: 'https://x.test/how.mp4', body: 'Watch this. Clear?', buttons: yesNo });
    expect(renderSms(m)).toBe('Watch this. Clear?\nhttps://x.test/how.mp4\n\n1. Yes\n2. No\n\nReply with a number.');
  });

  it('renders reply buttons with a document header and its file name', () => {
    const m = buttons({ document: { link: 'https://x.test/d/123', fileName: 'terms.pdf' }, body: 'Do you accept?', buttons: yesNo });
    expect(renderSms(m)).toBe('Do you accept?\nterms.pdf: https://x.test/d/123\n\n1. Yes\n2. No\n\nReply with a number.');
  });

  const booking = (extra: { sms?: string } = {}) => flow({ body: 'Book a table for tonight.', flowId: '123', cta: 'Book now', screen: 'START', ...extra });

  it('renders a flow with the note on its call-to-action', () => {
    expect(renderSms(booking())).toBe('Book a table for tonight.\n\nBook now: this form needs WhatsApp. Please open this chat in WhatsApp.');
  });

  it('renders a flow with the text the bot provides', () => {
    expect(renderSms(booking(), { flowText: 'Reply with the time and number of guests.' })).toBe('Book a table for tonight.\n\nReply with the time and number of guests.');
    expect(renderSms(booking(), { flowNote: (cta) => `${cta} needs WhatsApp.` })).toBe('Book a table for tonight.\n\nBook now needs WhatsApp.');
  });

  it('sends the bot’s sms override instead, for any variant', () => {
    expect(renderSms(booking({ sms: 'Call 555 0100 to book.' }))).toBe('Call 555 0100 to book.');
    expect(renderSms(buttons({ body: 'Sure?', buttons: yesNo, sms: 'Sure? Reply YES or NO.' }))).toBe('Sure? Reply YES or NO.');
  });

  it('renders text and sms messages as their text', () => {
    expect(renderSms(text('Hello there'))).toBe('Hello there');
    expect(renderSmsDetailed(sms('¿Mañana a las 5?'))).toEqual({ text: '¿Mañana a las 5?', encoding: 'gsm7', units: 16, segments: 1, shortened: [] });
  });

  it('reports UCS-2 when a part is not GSM-7', () => {
    expect(renderSmsDetailed(sizes()).encoding).toBe('gsm7');
    const r = renderSmsDetailed(buttons({ body: 'Kérsz kávét? ☕', buttons: yesNo }));
    expect(r.encoding).toBe('ucs2');
    expect(r.units).toBe(r.text.length);
  });

  it('leaves the hint out or changes it', () => {
    expect(renderSms(buttons({ body: 'Sure?', buttons: yesNo }), { hint: '' })).toBe('Sure?\n\n1. Yes\n2. No');
    expect(renderSms(buttons({ body: 'Sure?', buttons: yesNo }), { hint: 'Responde con un número.' })).toMatch(/\nResponde con un número\.$/);
  });
});

const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('renderSmsDetailed within maxSegments', () => {
  it('drops row descriptions first and keeps numbers and titles', () => {
    const m = list({
      body: 'Pick a plan.',
      button: 'Plans',
      rows: ['Basic', 'Plus', 'Pro'].map((t) => ({ id: t, title: t, description: 'x'.repeat(60) })),
    });
    const r = renderSmsDetailed(m, { maxSegments: 1 });
    expect(r.shortened).toEqual(['descriptions']);
    expect(r.text).toBe('Pick a plan.\n\n1. Basic\n2. Plus\n3. Pro\n\nReply with a number.');
    expect(r.segments).toBe(1);
  });

  it('then the footer, the header, and cuts the body at a word boundary', () => {
    const body = words(40);
    const m = list({
      header: 'Header text',
      body,
      footer: 'Footer text',
      button: 'Open',
      rows: [
        { id: '1', title: 'One', description: 'first' },
        { id: '2', title: 'Two' },
      ],
    });
    const r = renderSmsDetailed(m, { maxSegments: 1 });
    expect(r.shortened).toEqual(['descriptions', 'footer', 'header', 'body']);
    expect(r.segments).toBe(1);
    const [cut, choices] = r.text.split('\n\n');
    expect(cut).toMatch(/^word0 .*\.\.\.$/);
    const kept = cut!.slice(0, -3);
    expect(body.startsWith(kept)).toBe(true);
    expect(body[kept.length]).toBe(' '); // never mid-word
    expect(choices).toBe('1. One\n2. Two');
    expect(r.text.endsWith('Reply with a number.')).toBe(true);
  });

  it('drops a media link before cutting the body', () => {
    const m = buttons({ image: 'https://x.test/a.png', body: words(25), footer: 'f', buttons: [{ id: 'y', title: 'Yes' }] });
    const r = renderSmsDetailed(m, { maxSegments: 1 });
    expect(r.shortened).toEqual(['footer', 'header', 'body']);
    expect(r.text).not.toContain('https://');
    expect(r.text).toContain('\n\n1. Yes\n\n');
  });

  it('ends a cut UCS-2 body in …', () => {
    const r = renderSmsDetailed(text(`ő ${words(30)}`), { maxSegments: 1 });
    expect(r).toMatchObject({ encoding: 'ucs2', segments: 1, shortened: ['body'] });
    expect(r.text).toMatch(/^ő word0 .*\d…$/);
  });

  it('keeps within the default of 3 segments', () => {
    const r = renderSmsDetailed(text(words(100)));
    expect(r.segments).toBe(3);
    expect(r.shortened).toEqual(['body']);
    expect(renderSmsDetailed(text(words(100)), { maxSegments: Infinity }).shortened).toEqual([]);
  });

  it('returns the choices whole, over the limit, when they alone do not fit', () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, title: `Choice number ${i} here xx` }));
    const m = list({
      header: 'H',
      body: 'Pick one of these',
      footer: 'F',
      button: 'Open',
      sections: [
        { title: 'A', rows: rows.slice(0, 5) },
        { title: 'B', rows: rows.slice(5) },
      ],
    });
    const r = renderSmsDetailed(m, { maxSegments: 1 });
    expect(r.shortened).toEqual(['footer', 'header', 'body', 'sectionTitles', 'hint']);
    expect(r.text).toBe(rows.map((row, i) => `${i + 1}. ${row.title}`).join('\n'));
    expect(r.segments).toBe(2);
  });

  it('returns a text with no word boundary whole rather than broken', () => {
    const r = renderSmsDetailed(text(a(200)), { maxSegments: 1 });
    expect(r).toMatchObject({ text: a(200), segments: 2, shortened: [] });
  });

  it('rejects a maxSegments that is not a positive integer', () => {
    expect(() => renderSms(text('hi'), { maxSegments: 0 })).toThrow(ConfigError);
    expect(() => renderSms(text('hi'), { maxSegments: 1.5 })).toThrow(ConfigError);
  });
});

describe('matchSmsReply', () => {
  const choices = choicesOf(
    buttons({
      body: 'Size?',
      buttons: [
        { id: 's', title: 'Small' },
        { id: 'l', title: 'Large' },
        { id: 'x', title: 'Extra-large' },
      ],
    }),
  );

  it.each(['2', '2.', ' 2 ', '2)', '02', '2. Large', '2) large'])('reads %j as the second choice', (reply) => {
    expect(matchSmsReply(reply, choices)).toMatchObject({ id: 'l', title: 'Large' });
  });

  it.each(['Large', 'LARGÉ', ' large ', 'large!', 'lárge'])('reads the title %j', (reply) => {
    expect(matchSmsReply(reply, choices)?.id).toBe('l');
  });

  it('ignores spaces and punctuation inside titles', () => {
    expect(matchSmsReply('extra large', choices)?.id).toBe('x');
    expect(matchSmsReply('EXTRALARGE', choices)?.id).toBe('x');
  });

  it.each(['hello', '9', '0', '4', '', '  ', '2 small', 'larger', '-1'])('gives undefined for %j', (reply) => {
    expect(matchSmsReply(reply, choices)).toBeUndefined();
  });

  it('gives undefined when a title matches several rows', () => {
    const m = list({
      body: 'b',
      button: 'Open',
      sections: [
        { title: 'Hot', rows: [{ id: 'h', title: 'Tea' }] },
        { title: 'Cold', rows: [{ id: 'c', title: 'Tea' }] },
      ],
    });
    expect(matchSmsReply('tea', choicesOf(m))).toBeUndefined();
    expect(matchSmsReply('2', choicesOf(m))?.id).toBe('c');
  });
});
