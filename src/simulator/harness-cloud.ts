/**
 * Cloud API bodies read back into the message model, for the harness and the simulators: what
 * the bot sent when the outbox row that built it is not at hand (or to fill in what the provider
 * added, such as a flow's token), and a template's parameters as a person reads them.
 */
import type { Message } from '../messages/message.js';
import type { FlowBody, ListMessages, ReplyButtons } from '../messages/schema.js';
import type { TemplateBody, TemplateParameter } from '../messages/template.js';

type Obj = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Thrown for a Cloud API body the simulators cannot read (the sandbox refuses such bodies, so this is a bug). */
export class UnreadableCloudBody extends Error {
  override name = 'UnreadableCloudBody';
}

/** True for a WhatsApp-channel request shaped for the Cloud API (`messaging_product: "whatsapp"`). */
export function isCloudBody(request: unknown): request is Obj {
  return obj(request)['messaging_product'] === 'whatsapp';
}

/** The message a Cloud API body carries: text, template, or a list, buttons or flow in the seed's shapes. */
export function cloudMessage(body: Obj): Message {
  const type = str(body['type']);
  if (type === 'text') return { kind: 'text', text: str(obj(body['text'])['body']) ?? '' };
  if (type === 'template') return { kind: 'template', template: obj(body['template']) as unknown as TemplateBody };
  if (type === 'interactive') {
    const i = obj(body['interactive']);
    if (i['type'] === 'list') return { kind: 'list', listMessages: cloudList(i) };
    if (i['type'] === 'button') return { kind: 'buttons', replyButtons: cloudButtons(i) };
    if (i['type'] === 'flow') return { kind: 'flow', flow: cloudFlow(i) };
    throw new UnreadableCloudBody(`a Cloud API interactive message of type ${JSON.stringify(i['type'])} cannot be read`);
  }
  throw new UnreadableCloudBody(`a Cloud API message of type ${JSON.stringify(type)} cannot be read`);
}

function texts(i: Obj): { headerText?: string; body: string; footer?: string } {
  const header = obj(i['header']);
  const headerText = header['type'] === 'text' ? str(header['text']) : undefined;
  const footer = str(obj(i['footer'])['text']);
  return { ...(headerText !== undefined && { headerText }), body: str(obj(i['body'])['text']) ?? '', ...(footer !== undefined && { footer }) };
}

function cloudList(i: Obj): ListMessages {
  const action = obj(i['action']);
  const sections = arr(action['sections']).map((s) => {
    const title = str(obj(s)['title']);
    const messages = arr(obj(s)['rows']).map((r) => {
      const description = str(obj(r)['description']);
      return { id: str(obj(r)['id']) ?? '', title: str(obj(r)['title']) ?? '', ...(description !== undefined && { description }) };
    });
    return { ...(title !== undefined && { title }), messages };
  });
  return { ...texts(i), buttonText: str(action['button']) ?? '', sections };
}

function cloudButtons(i: Obj): ReplyButtons {
  const { body, footer } = texts(i);
  const header = obj(i['header']);
  const media = obj(header[str(header['type']) ?? '']);
  // A media header sent by id (uploaded media) has no link to show: the id stands in for it.
  const link = str(media['link']) ?? `media:${str(media['id']) ?? ''}`;
  const headers =
    header['type'] === 'image'
      ? { headerImage: { link } }
      : header['type'] === 'video'
        ? { headerVideo: { link } }
        : header['type'] === 'document'
          ? { headerDocument: { link, fileName: str(media['filename']) ?? 'document' } }
          : {};
  const buttons = arr(obj(i['action'])['buttons']).map((b) => {
    const reply = obj(obj(b)['reply']);
    return { id: str(reply['id']) ?? '', title: str(reply['title']) ?? '' };
  });
  return { ...headers, body, ...(footer !== undefined && { footer }), buttons };
}

function cloudFlow(i: Obj): FlowBody {
  const p = obj(obj(i['action'])['parameters']);
  const payload = obj(p['flow_action_payload']);
  const screen = str(payload['screen']);
  const data = payload['data'];
  return {
    body: str(obj(i['body'])['text']) ?? '',
    action: {
      name: 'flow',
      parameters: {
        mode: p['mode'] === 'draft' ? 'draft' : 'published',
        flow_message_version: '3',
        flow_id: str(p['flow_id']) ?? str(p['flow_name']) ?? '',
        flow_token: str(p['flow_token']) ?? '',
        flow_cta: str(p['flow_cta']) ?? '',
        flow_action: p['flow_action'] === 'data_exchange' ? 'data_exchange' : 'navigate',
        ...(screen !== undefined && { flow_action_payload: { screen, ...(data !== undefined && { data: obj(data) }) } }),
      },
    },
  };
}

/** The Cloud API `type` of a body, with `interactive.type` for interactive ones (`interactive:list`), as the sandbox records it. */
export function cloudTypeOf(body: Obj): string {
  const type = str(body['type']) ?? '';
  return type === 'interactive' ? `interactive:${str(obj(body['interactive'])['type']) ?? ''}` : type;
}

/** The Cloud API `type` each message kind goes as. */
const CLOUD_TYPES: Readonly<Record<Message['kind'], string>> = {
  text: 'text',
  template: 'template',
  list: 'interactive:list',
  buttons: 'interactive:button',
  flow: 'interactive:flow',
  sms: '',
};

/**
 * What a Cloud API body delivered: the stored message (the outbox row's) when it is what went (a
 * window policy may have sent a template in its place), else the message read back from the
 * body; a flow with the token it was sent with.
 */
export function deliveredMessage(stored: unknown, body: Obj): Message {
  const m = stored as Message | undefined;
  const message = m !== undefined && m !== null && CLOUD_TYPES[m.kind] === cloudTypeOf(body) ? m : cloudMessage(body);
  const token = str(obj(obj(obj(body['interactive'])['action'])['parameters'])['flow_token']);
  if (message.kind !== 'flow' || token === undefined) return message;
  const { flow } = message;
  return { ...message, flow: { ...flow, action: { ...flow.action, parameters: { ...flow.action.parameters, flow_token: token } } } };
}

/** A template parameter as a person reads it: its text, a currency's or date's fallback, a media header's link. */
export function parameterText(p: TemplateParameter): string {
  switch (p.type) {
    case 'text':
      return p.text;
    case 'currency':
      return p.currency.fallback_value;
    case 'date_time':
      return p.date_time.fallback_value;
    case 'image':
      return `[image ${'link' in p.image ? p.image.link : p.image.id}]`;
    case 'video':
      return `[video ${'link' in p.video ? p.video.link : p.video.id}]`;
    case 'document':
      return `[document ${p.document.filename ?? ('link' in p.document ? p.document.link : p.document.id)}]`;
  }
}

/** A template's header and body parameters, as texts, in order. */
export function templateParameters(t: TemplateBody): { readonly header: readonly string[]; readonly body: readonly string[] } {
  const of = (type: 'header' | 'body'): string[] => (t.components ?? []).flatMap((c) => (c.type === type ? c.parameters.map(parameterText) : []));
  return { header: of('header'), body: of('body') };
}
