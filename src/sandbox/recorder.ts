/** What the sandbox saw: every provider request and every accepted message, with listeners. */
import { EventEmitter } from 'node:events';
import type { AcceptedRead, RecordedRequest, SandboxEndpoint, SandboxMessage } from './types.js';

/** A message as handed to {@link Recorder.addMessage}: everything but its sequence number. */
export type NewMessage = SandboxMessage extends infer M ? (M extends SandboxMessage ? Omit<M, 'seq'> : never) : never;

/** A request as handed to {@link Recorder.addRequest}. */
export type NewRequest = Omit<RecordedRequest, 'seq' | 'status'>;

/** Keeps bounded lists of requests and messages and tells listeners as they arrive. */
export class Recorder {
  readonly #requests: RecordedRequest[] = [];
  readonly #messages: SandboxMessage[] = [];
  readonly #reads: AcceptedRead[] = [];
  readonly #events = new EventEmitter();
  readonly #max: number;
  #requestSeq = 0;
  #messageSeq = 0;
  #readSeq = 0;
  #counts: Record<SandboxEndpoint, number> = { token: 0, messaging: 0, sms: 0, 'cloud-api': 0 };

  constructor(max: number) {
    this.#max = max;
    this.#events.setMaxListeners(0);
  }

  /** The recorded requests, oldest first. */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /** The accepted messages, oldest first. */
  get messages(): readonly SandboxMessage[] {
    return this.#messages;
  }

  /** Records a request as it arrives; its status is filled in when it is answered. */
  addRequest(request: NewRequest): RecordedRequest {
    const record: RecordedRequest = { ...request, seq: ++this.#requestSeq, status: 0 };
    this.#counts[request.endpoint]++;
    push(this.#requests, record, this.#max);
    return record;
  }

  /** Marks a request answered and tells the request listeners. */
  answered(record: RecordedRequest): void {
    this.#events.emit('request', record);
  }

  /** Records an accepted message and tells the message listeners. */
  addMessage(message: NewMessage): SandboxMessage {
    const record = { ...message, seq: ++this.#messageSeq } as SandboxMessage;
    push(this.#messages, record, this.#max);
    this.#events.emit('message', record);
    return record;
  }

  /** The accepted read receipts, oldest first. */
  get reads(): readonly AcceptedRead[] {
    return this.#reads;
  }

  /** Records an accepted read receipt and tells the read listeners. */
  addRead(read: Omit<AcceptedRead, 'seq'>): AcceptedRead {
    const record: AcceptedRead = { ...read, seq: ++this.#readSeq };
    push(this.#reads, record, this.#max);
    this.#events.emit('read', record);
    return record;
  }

  /** Calls `listener` for each accepted read receipt; returns a function that stops it. */
  onRead(listener: (read: AcceptedRead) => void): () => void {
    return this.#on('read', listener);
  }

  /** Requests to one endpoint. */
  requestsTo(endpoint: SandboxEndpoint): RecordedRequest[] {
    return this.#requests.filter((r) => r.endpoint === endpoint);
  }

  /** How many requests reached one endpoint since the last clear (however many are kept). */
  count(endpoint: SandboxEndpoint): number {
    return this.#counts[endpoint];
  }

  /** Messages accepted for one recipient, on both channels. */
  messagesTo(number: string): SandboxMessage[] {
    return this.#messages.filter((m) => m.to === number);
  }

  /** The accepted message with this provider id. */
  messageById(providerId: string): SandboxMessage | undefined {
    return this.#messages.find((m) => m.providerId === providerId);
  }

  /** Calls `listener` for each accepted message; returns a function that stops it. */
  onMessage(listener: (message: SandboxMessage) => void): () => void {
    return this.#on('message', listener);
  }

  /** Calls `listener` for each answered request; returns a function that stops it. */
  onRequest(listener: (request: RecordedRequest) => void): () => void {
    return this.#on('request', listener);
  }

  /** Forgets every request, message and read receipt (sequence numbers keep counting). */
  clear(): void {
    this.#requests.length = 0;
    this.#messages.length = 0;
    this.#reads.length = 0;
    this.#counts = { token: 0, messaging: 0, sms: 0, 'cloud-api': 0 };
  }

  #on<T>(event: string, listener: (value: T) => void): () => void {
    // A failing listener (a simulator page, a test) must not turn into a provider error.
    const guarded = (value: T): void => {
      try {
        listener(value);
      } catch (err) {
        process.emitWarning(`A sandbox ${event} listener threw: ${String(err)}`, { code: 'COLLOQUY_SANDBOX_LISTENER' });
      }
    };
    this.#events.on(event, guarded);
    return () => this.#events.off(event, guarded);
  }
}

function push<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}
