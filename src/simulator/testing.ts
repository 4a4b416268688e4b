/**
 * `colloquy/testing`: drive a bot in tests with the real runtime, a `:memory:` store, a manual
 * clock and the sandbox provider over HTTP on 127.0.0.1, and check conversations against
 * recorded transcripts.
 *
 * @example
 * import { createTestBot } from 'colloquy/testing';
 * const conv = await createTestBot(bot);
 * await conv.type('hi');
 * await conv.tap('Margherita');
 * conv.expectState('size').expectChoices(['Small', 'Large']);
 */
export { createTestBot, TestConversation, BotTurnError, TestAgent, type HandoffMatch } from './harness.js';
export { ManualClock, MANUAL_CLOCK_START } from '../conversation/clock.js';
export { DEFAULT_TEST_USER, type TestBotOptions } from './harness-world.js';
export { ExpectationError, readableText, type SentMatch } from './harness-expect.js';
export type { CloudRequest, SentButtons, SentFlow, SentKind, SentList, SentMessage, SentSms, SentTemplate, SentText, SentWhatsAppText } from './harness-sent.js';
export type { RenderedTemplate } from './cloud-sandbox.js';
export { parseDuration, formatDuration, type Duration } from './harness-duration.js';
export { sentLine } from './transcript-lines.js';
export { recordTranscript, replayTranscript, expectTranscript, TranscriptMismatchError } from './transcript.js';
export { transcriptLines, type AgentAction, type RawEvent, type TranscriptAction, type TranscriptStep } from './transcript-format.js';
export { renderSent, type RenderOptions } from './render.js';
export {
  checkRehydration,
  runInMemory,
  runThroughStore,
  RehydrationMismatchError,
  type RehydrationStep,
  type RehydrationOptions,
  type StoreRunOptions,
  type CheckRehydrationOptions,
  type MemoryRun,
  type StoreRun,
  type RehydrationRuns,
} from './rehydration.js';
export type { OlderConversation } from './seed.js';
export {
  describeProvider,
  providerContract,
  ProviderContractError,
  UPSTREAM_OUTCOMES,
  type CheckResult,
  type ConformanceOptions,
  type ContractCheck,
  type DescribeProviderOptions,
  type ProviderSetup,
  type ProviderUnderTest,
  type ProviderUpstream,
  type TestRunner,
  type Unsupportable,
  type UpstreamOutcome,
} from '../testing/provider-conformance.js';
export { FlowClient, FlowResponseError, FLOW_DATA_API_VERSION, type FlowClientOptions, type FlowResponse, type FlowSendOptions } from '../testing/flow-client.js';
export type { TestFlow, TestFlowSubmitOptions } from './harness-flow.js';
export type { FlowOutcome, FlowReply, FlowRequest } from '../conversation/flow-wire.js';
