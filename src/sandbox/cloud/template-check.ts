/**
 * A template message against the templates the sandbox knows: an unknown name or language is
 * 132001, a wrong number of parameters 132000, a parameter of the wrong kind 132012.
 */
import { graphError } from './graph-error.js';
import type { TemplateComponentRequest, TemplateRequest } from './messages.js';
import { placeholders } from './templates.js';
import type { SandboxTemplate } from './types.js';
import type { Reply } from '../types.js';

/** Finds the template a message names and checks its parameters; a refusal, or the template. */
export function checkTemplate(request: TemplateRequest, known: readonly SandboxTemplate[]): { template: SandboxTemplate } | { refusal: Reply } {
  const template = known.find((t) => t.name === request.name && t.language === request.language.code);
  if (template === undefined) {
    const other = known.filter((t) => t.name === request.name).map((t) => t.language);
    const hint = other.length > 0 ? ` (it exists in ${other.join(', ')})` : '';
    return { refusal: graphError(132001, { details: `template name (${request.name}) does not exist in ${request.language.code}${hint}` }) };
  }
  const problem = parameterProblem(template, request.components ?? []);
  return problem === undefined ? { template } : { refusal: problem };
}

function parameterProblem(template: SandboxTemplate, components: readonly TemplateComponentRequest[]): Reply | undefined {
  const at = (type: string): number => components.findIndex((c) => c.type === type);
  return (
    countProblem('body', placeholders(template.body).length, components[at('body')], at('body')) ??
    headerProblem(template, components[at('header')], at('header')) ??
    buttonProblem(template, components)
  );
}

function countProblem(what: 'body' | 'header', expected: number, c: TemplateComponentRequest | undefined, i: number): Reply | undefined {
  const got = c?.parameters.length ?? 0;
  if (got === expected) return undefined;
  const path = c === undefined ? `template.components (no ${what} component)` : `template.components[${i}].parameters`;
  return graphError(132000, { details: `${path}: the template's ${what} expects ${expected} parameter${expected === 1 ? '' : 's'}, got ${got}` });
}

function headerProblem(template: SandboxTemplate, c: TemplateComponentRequest | undefined, i: number): Reply | undefined {
  const h = template.header;
  if (h === undefined || h.type === 'text') return countProblem('header', h === undefined ? 0 : placeholders(h.text).length, c, i);
  const p = c?.parameters[0];
  if (p === undefined) return graphError(132000, { details: `template.components (no header component): the template's ${h.type} header expects 1 parameter, got 0` });
  if (p.type === h.type) return undefined;
  return graphError(132012, { details: `template.components[${i}].parameters[0].type: the template's header is ${h.type}, got ${p.type}` });
}

function buttonProblem(template: SandboxTemplate, components: readonly TemplateComponentRequest[]): Reply | undefined {
  const replies = template.quickReplies ?? [];
  const seen = new Set<number>();
  for (const [i, c] of components.entries()) {
    if (c.type !== 'button') continue;
    const index = Number(c.index);
    const path = `template.components[${i}]`;
    if (seen.has(index)) return graphError(100, { details: `${path}.index: button ${index} is given more than once` });
    seen.add(index);
    if (c.sub_type === 'url') return graphError(132000, { details: `${path}: the template has no URL button` });
    if (index >= replies.length) return graphError(132000, { details: `${path}.index: the template has ${replies.length} quick-reply button${replies.length === 1 ? '' : 's'}, no button ${index}` });
    if (c.parameters[0]?.type !== 'payload') return graphError(132012, { details: `${path}.parameters[0].type: a quick-reply button takes a payload` });
  }
  return undefined;
}
