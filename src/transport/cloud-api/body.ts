/**
 * From Colloquy's message model to a Cloud API message body. A bot's list, buttons and flow hold
 * the seed's body objects (`listMessages`, `replyButtons`, `flow`); here they take the Cloud API's
 * shapes (`interactive` of `type` list, button, flow), and text and templates their own types.
 */
import { MessageValidationError, type Issue } from '../../errors.js';
import { FLOW_TOKEN_PLACEHOLDER } from '../../messages/builders.js';
import type { ButtonsMessage, FlowMessage, ListMessage, Message } from '../../messages/message.js';
import { check } from '../../messages/validate.js';
import type { ProviderAddress } from '../provider.js';
import { CloudMessageSchema, type CloudInteractive, type CloudMessage } from './schema.js';

/**
 * The Cloud API body for `message` to `address.to`, validated against the Cloud API's limits.
 * A flow left with the placeholder token gets `address.flowToken`. Throws a
 * {@link MessageValidationError} whose issue paths are the Cloud body's
 * (`interactive.action.sections[0].rows[0].title`); an SMS message has no Cloud body and is refused.
 */
export function toCloudMessage(message: Message, address: ProviderAddress): CloudMessage {
  const issues: Issue[] = [];
  const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to: address.to } as const;
  let body: unknown;
  switch (message.kind) {
    case 'text':
      body = { ...envelope, type: 'text', text: { body: message.text } };
      break;
    case 'template':
      body = { ...envelope, type: 'template', template: message.template };
      break;
    case 'list':
      body = { ...envelope, type: 'interactive', interactive: listOf(message) };
      break;
    case 'buttons':
      body = { ...envelope, type: 'interactive', interactive: buttonsOf(message) };
      break;
    case 'flow':
      body = { ...envelope, type: 'interactive', interactive: flowOf(message, address, issues) };
      break;
    default:
      throw new MessageValidationError([{ path: ['kind'], message: `a "${(message as { kind: string }).kind}" message has no Cloud API body: it goes by SMS` }]);
  }
  const r = check(CloudMessageSchema, body);
  if (!r.ok || issues.length > 0) throw new MessageValidationError([...issues, ...(r.ok ? [] : r.issues)]);
  return r.value;
}

function listOf(m: ListMessage): CloudInteractive {
  const l = m.listMessages;
  return {
    type: 'list',
    ...(l.headerText !== undefined && { header: { type: 'text', text: l.headerText } }),
    body: { text: l.body },
    ...(l.footer !== undefined && { footer: { text: l.footer } }),
    action: {
      button: l.buttonText,
      sections: l.sections.map((s) => ({
        ...(s.title !== undefined && { title: s.title }),
        rows: s.messages.map((r) => ({ id: r.id, title: r.title, ...(r.description !== undefined && { description: r.description }) })),
      })),
    },
  };
}

function buttonsOf(m: ButtonsMessage): CloudInteractive {
  const b = m.replyButtons;
  const header = b.headerImage
    ? { type: 'image' as const, image: { link: b.headerImage.link } }
    : b.headerVideo
      ? { type: 'video' as const, video: { link: b.headerVideo.link } }
      : b.headerDocument
        ? { type: 'document' as const, document: { link: b.headerDocument.link, filename: b.headerDocument.fileName } }
        : undefined;
  return {
    type: 'button',
    ...(header !== undefined && { header }),
    body: { text: b.body },
    ...(b.footer !== undefined && { footer: { text: b.footer } }),
    action: { buttons: b.buttons.map((x) => ({ type: 'reply' as const, reply: { id: x.id, title: x.title } })) },
  };
}

/** The flow's parameters as the Cloud API takes them; the placeholder token replaced, or an issue. */
function flowOf(m: FlowMessage, address: ProviderAddress, issues: Issue[]): CloudInteractive {
  const p = m.flow.action.parameters;
  let token = p.flow_token;
  if (token === FLOW_TOKEN_PLACEHOLDER) {
    if (address.flowToken === undefined) {
      issues.push({ path: ['interactive', 'action', 'parameters', 'flow_token'], message: 'no flow token: pass one, or send the flow from a conversation' });
    } else token = address.flowToken;
  }
  return {
    type: 'flow',
    body: { text: m.flow.body },
    action: {
      name: 'flow',
      parameters: {
        flow_message_version: p.flow_message_version,
        flow_token: token,
        flow_id: p.flow_id,
        flow_cta: p.flow_cta,
        flow_action: p.flow_action,
        ...(p.flow_action_payload !== undefined && { flow_action_payload: p.flow_action_payload }),
        mode: p.mode,
      },
    },
  };
}
