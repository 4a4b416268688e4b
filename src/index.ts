/**
 * `colloquy`: what a bot author imports. Defining a bot, the messages it says, the events it gets,
 * handing a conversation to a person, changing a bot between versions, and the errors. It loads
 * no database driver, no HTTP server and no native module (a test holds it to that), so a file
 * that only declares a bot stays light. Everything that runs bots lives behind subpaths, each an
 * entry of its own:
 *
 * - `colloquy/server`: the server, the runtime, the webhook and agents' routers, the send adapter,
 *   configuration, metrics and logging;
 * - `colloquy/store`: the store port and its records, and `openStore()` for either engine;
 * - `colloquy/sqlite`, `colloquy/postgres`: each store itself (better-sqlite3 and pg are optional
 *   peer dependencies: install the one you use);
 * - `colloquy/testing`: the test harness, transcripts and rehydration checks;
 * - `colloquy/messages`: the provider's request schemas, limits, GSM-7 and SMS rendering;
 * - `colloquy/transport`: the HTTP client, token providers, retry, pacing, channel classifiers;
 * - `colloquy/webhook`: the webhook's schemas, errors, number routing and HTTP server;
 * - `colloquy/sandbox`: the sandbox provider, its faults, and inbound payloads to post to a webhook;
 * - `colloquy/cli`: the `colloquy` command as a function.
 */

// Writing a bot.
export {
  defineBot,
  isBot,
  type Bot,
  type BotDefinition,
  type BotOptions,
  type FallbackPolicy,
  type FlowField,
  type FlowForm,
  type FlowScreenForm,
  type ReadReceiptPolicy,
  type UnhandledPolicy,
  type WindowAction,
  type WindowInfo,
  type WindowPolicy,
} from './conversation/bot.js';
export { say, type SayInput } from './conversation/say.js';

// Live flows: how a state answers its flow's screens through the Flow endpoint.
export {
  flowScreen,
  flowComplete,
  flowError,
  DEFAULT_FLOW_BUDGET_MS,
  type FlowAnswer,
  type FlowAnswerOf,
  type FlowCompleteAnswer,
  type FlowErrorAnswer,
  type FlowRequestInfo,
  type FlowScreenAnswer,
  type FlowScreens,
  type ScreenHandler,
  type ScreenSubmit,
} from './conversation/flow-screens.js';
export type { ColloquyEvent, DeliveryFailedEvent, FlowEvent, ReplyEvent, ReplyVia, SendFailedEvent, TextEvent, UnsupportedEvent } from './conversation/events.js';
export {
  buttons,
  flow,
  list,
  sms,
  template,
  text,
  FLOW_TOKEN_PLACEHOLDER,
  type ButtonInit,
  type ButtonsInit,
  type FlowInit,
  type ListInit,
  type RowInit,
  type SectionInit,
  type TemplateInit,
} from './messages/builders.js';
export type { TemplateBody, TemplateComponent, TemplateParameter } from './messages/template.js';
export type { ButtonsMessage, Choice, FlowMessage, InteractiveMessage, ListMessage, Message, SmsMessage, SmsOptions, TemplateMessage, TextMessage } from './messages/message.js';

// A bot's own fallback policy: what it is told about a failed interactive send.
export { UNREACHABLE_CODES } from './conversation/fallback-info.js';
export type { FallbackInfo, FallbackTrigger } from './conversation/fallback-info.js';

// Handing a conversation to a person: the bot's action and the events it gets back.
export { handoff, DEFAULT_HANDOFF_TIMEOUT_MS, type HandoffOptions, type HandoffInput } from './conversation/handoff.js';
export type { HandoffEndedEvent, HandoffTimeoutEvent } from './conversation/events.js';

// Changing a bot: versions and migrations of live conversations.
export { IncompatibleStateError, MigrationError, type BotMigration, type IncompatiblePolicy } from './conversation/versions.js';

// Errors: each has a `code` and the context it happened in.
export {
  AuthError,
  BotError,
  ColloquyError,
  ConfigError,
  DriverMissingError,
  MessageValidationError,
  StoreError,
  StoreUnavailableError,
  TransportError,
  VersionConflictError,
  formatIssues,
  isColloquyError,
  type Endpoint,
  type Issue,
  type MessageOrigin,
} from './errors.js';
