/** The templates the sandbox knows by default, and what a template message shows once filled in. */
import type { AcceptedCloud } from '../types.js';
import type { TemplateRequest } from './messages.js';
import type { CloudApiSettings, SandboxTemplate } from './types.js';

function both(t: Omit<SandboxTemplate, 'language'>): SandboxTemplate[] {
  return [
    { ...t, language: 'en' },
    { ...t, language: 'en_US' },
  ];
}

/**
 * The sandbox's default templates, each in `en` and `en_US`:
 * - `colloquy_reopen`: body `Hi {{1}}, we have an update for you. Shall we continue?`, quick
 *   replies `Continue` (index 0) and `Not now` (index 1); the generic "window closed" template.
 * - `colloquy_reminder`: body `Reminder: {{1}}`, quick reply `OK` (index 0).
 * - `colloquy_hello`: body `Hello! Reply to this message to start a conversation.`, no parameters.
 */
export const SANDBOX_TEMPLATES: readonly SandboxTemplate[] = [
  ...both({ name: 'colloquy_reopen', body: 'Hi {{1}}, we have an update for you. Shall we continue?', quickReplies: ['Continue', 'Not now'] }),
  ...both({ name: 'colloquy_reminder', body: 'Reminder: {{1}}', quickReplies: ['OK'] }),
  ...both({ name: 'colloquy_hello', body: 'Hello! Reply to this message to start a conversation.' }),
];

/** The numbers of a text's `{{n}}` placeholders, distinct and sorted. */
export function placeholders(text: string): number[] {
  const found = new Set<number>();
  for (const m of text.matchAll(/\{\{\s*([0-9]+)\s*\}\}/g)) found.add(Number(m[1]));
  return [...found].sort((a, b) => a - b);
}

/** A template message as the user would see it. */
export interface RenderedTemplate {
  readonly header?: { readonly type: 'text'; readonly text: string } | { readonly type: 'image' | 'video' | 'document'; readonly media: unknown };
  readonly body: string;
  readonly footer?: string;
  /** The quick-reply buttons: the text shown and the payload a tap sends back (the text when none was given). */
  readonly buttons: readonly { readonly text: string; readonly payload: string }[];
}

/** Fills a known template with a message's parameters, for display (the simulators). */
export function renderTemplate(template: SandboxTemplate, request: TemplateRequest): RenderedTemplate {
  const components = request.components ?? [];
  const paramsOf = (type: string): unknown[] => components.find((c) => c.type === type)?.parameters ?? [];
  const body = fill(template.body, paramsOf('body'));
  const header = renderHeader(template, paramsOf('header'));
  const buttons = (template.quickReplies ?? []).map((text, i) => {
    const c = components.find((x) => x.type === 'button' && x.sub_type === 'quick_reply' && Number(x.index) === i);
    const p = c?.type === 'button' ? c.parameters[0] : undefined;
    return { text, payload: p !== undefined && p.type === 'payload' ? p.payload : text };
  });
  return { ...(header !== undefined && { header }), body, ...(template.footer !== undefined && { footer: template.footer }), buttons };
}

/** An accepted template message, filled from the template it names; undefined for other messages. */
export function templateView(settings: CloudApiSettings, message: AcceptedCloud): RenderedTemplate | undefined {
  if (message.type !== 'template') return undefined;
  const request = message.request['template'] as TemplateRequest;
  const template = settings.templates.find((t) => t.name === request.name && t.language === request.language.code);
  return template === undefined ? undefined : renderTemplate(template, request);
}

function renderHeader(template: SandboxTemplate, params: unknown[]): RenderedTemplate['header'] {
  const h = template.header;
  if (h === undefined) return undefined;
  if (h.type === 'text') return { type: 'text', text: fill(h.text, params) };
  const p = params[0] as Record<string, unknown> | undefined;
  return { type: h.type, media: p?.[h.type] };
}

function fill(text: string, params: unknown[]): string {
  return text.replace(/\{\{\s*([0-9]+)\s*\}\}/g, (whole, n: string) => {
    const p = params[Number(n) - 1] as Record<string, unknown> | undefined;
    return p === undefined ? whole : parameterText(p);
  });
}

function parameterText(p: Record<string, unknown>): string {
  if (typeof p['text'] === 'string') return p['text'];
  const fallback = (p['currency'] ?? p['date_time']) as { fallback_value?: unknown } | undefined;
  return typeof fallback?.fallback_value === 'string' ? fallback.fallback_value : `[${String(p['type'])}]`;
}
