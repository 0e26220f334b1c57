// JSON-RPC 2.0 over lines: the calls the plugin makes (numbered ids, their answers, their
// delays), the messages it is sent (one, or a batch answered as a batch), and the error answers
// the protocol asks for: -32700 for a line that is not JSON, -32600 for what is not a request.

import { EscouadeError } from './errors';
import { ErrorCode } from './protocol';
import type { Transport } from './transport';

export type Id = string | number | null;

/** A request or a notification the plugin is sent. */
export interface Incoming {
  readonly method: string;
  readonly params: unknown;
  /** Absent for a notification. */
  readonly id?: Id;
}

/**
 * What serves an incoming message: its answer for a request, nothing for a notification; given
 * at once when it has it (a handler that returned a value), a Later when it must wait.
 */
export type Serve = (message: Incoming) => Reply | undefined | Later;

/**
 * A reply that waits for `value` (a promise or another thenable, waited for as `await` would):
 * `reply` makes it from what `value` gave, in the job that takes it; a throw is answered as an
 * error, a Later is waited for in turn. Nothing else comes between the value and the answer's
 * write: inside the sandbox each promise job costs several times Node's (docs/authors.md).
 */
export class Later {
  constructor(
    readonly value: PromiseLike<unknown>,
    readonly reply: (value: unknown) => Reply | undefined | Later = () => undefined,
  ) {}
}

/** A request's answer; `after` runs once it has been written (the start after initialize). */
export type Reply = ({ result: unknown } | { error: EscouadeError }) & { after?: () => void };

interface Pending {
  readonly method: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: EscouadeError) => void;
  readonly timer: ReturnType<typeof setTimeout> | undefined;
}

// An incoming message served: its answer (none for a notification), and what runs once that
// answer has been written.
type Served = [object | undefined, (() => void) | undefined];

// A message whose reply waits: what its answer needs once the reply comes.
class Waiting {
  constructor(
    readonly id: Id | undefined,
    readonly method: string,
    readonly later: Later,
  ) {}
}

/** One call of a batch the plugin sends. */
export interface BatchCall {
  readonly method: string;
  readonly params?: unknown;
}

export class Session {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly serve: Serve,
    /** Said on stderr (a line of the plugin's journal): what the session could not use. */
    private readonly trace: (what: string) => void,
    /** Whether calls reject when Escouade does not answer in time (under Node). */
    private readonly timeouts: boolean,
  ) {}

  /** Sends a request; resolves with its result, rejects with an EscouadeError. */
  call(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    const [message, answer] = this.prepare(method, params, timeoutMs);
    this.send(message);
    return answer;
  }

  /** Sends several requests in one batch (one line); each answer settles its own promise. */
  batch(calls: readonly BatchCall[], timeoutOf: (method: string) => number): Promise<unknown>[] {
    const messages: object[] = [];
    const answers: Promise<unknown>[] = [];
    for (const c of calls) {
      const [message, answer] = this.prepare(c.method, c.params, timeoutOf(c.method));
      messages.push(message);
      answers.push(answer);
    }
    if (messages.length > 0) this.send(messages);
    return answers;
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** Takes one line of input. */
  take(line: string): void {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (e) {
      this.send(errorAnswer(null, ErrorCode.parse, `not JSON: ${(e as Error).message}`));
      return;
    }
    if (Array.isArray(message)) {
      if (message.length === 0) {
        this.send(errorAnswer(null, ErrorCode.invalidRequest, 'an empty batch'));
        return;
      }
      this.track(this.takeBatch(message));
      return;
    }
    if (isAnswer(message)) {
      this.answer(message);
      return;
    }
    const served = this.serveOne(message);
    if (served instanceof Waiting) {
      this.answerLater(served);
      return;
    }
    // Answered in this turn, without a promise between: inside the sandbox each one is a job of
    // the engine's, which costs several times Node's (docs/authors.md).
    try {
      this.reply(served);
    } catch (e) {
      this.unserved(e);
    }
  }

  /** The input ended: every call still waiting rejects. */
  end(): void {
    this.closed = true;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      if (p.timer !== undefined) clearTimeout(p.timer);
      p.reject(new EscouadeError(ErrorCode.failed, `${p.method}: Escouade closed the plugin's input before answering`));
    }
  }

  /** Resolves once no incoming message is being served (for tests and the shutdown). */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private prepare(method: string, params: unknown, timeoutMs: number): [object, Promise<unknown>] {
    const id = this.nextId++;
    const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    const answer = new Promise<unknown>((resolve, reject) => {
      if (this.closed) {
        reject(new EscouadeError(ErrorCode.failed, `${method}: the plugin's input has ended`));
        return;
      }
      const timer = this.timeouts
        ? setTimeout(() => {
            if (!this.pending.delete(id)) return;
            reject(new EscouadeError(ErrorCode.failed, `${method}: no answer from Escouade within ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
      this.pending.set(id, { method, resolve, reject, timer });
    });
    return [message, answer];
  }

  private reply([reply, after]: Served): void {
    if (reply !== undefined) this.send(reply);
    if (after) after();
  }

  private unserved(e: unknown): void {
    this.trace(`a message could not be served: ${describe(e)}`);
  }

  private send(message: unknown): void {
    this.transport.write(JSON.stringify(message));
  }

  // A message whose reply waits: its answer written in the job that takes the reply's value.
  private answerLater(w: Waiting): void {
    ++this.inFlight;
    answerWhenDone(w, w.later, (served) => this.writeLater(served));
  }

  private writeLater(served: Served): void {
    try {
      this.reply(served);
    } catch (e) {
      this.unserved(e);
    }
    this.served();
  }

  private track(work: Promise<void>): void {
    ++this.inFlight;
    work.then(
      () => this.served(),
      (e: unknown) => {
        this.unserved(e);
        this.served();
      },
    );
  }

  // One message fewer being served; the waiters of idle() told when none is.
  private served(): void {
    if (--this.inFlight !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async takeBatch(batch: unknown[]): Promise<void> {
    const replies: (Served | Promise<Served>)[] = [];
    for (const m of batch) {
      if (isAnswer(m)) this.answer(m);
      else replies.push(batchAnswer(this.serveOne(m)));
    }
    const served = await Promise.all(replies);
    const answered = served.map(([r]) => r).filter((r): r is object => r !== undefined);
    if (answered.length > 0) this.send(answered);
    for (const [, after] of served) if (after) after();
  }

  private answer(message: { id?: unknown; result?: unknown; error?: unknown }): void {
    const id = message.id;
    const p = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (p === undefined) {
      this.trace(`an answer to no call of the plugin's (id ${JSON.stringify(id)}) was set aside`);
      return;
    }
    this.pending.delete(id as number);
    if (p.timer !== undefined) clearTimeout(p.timer);
    if ('error' in message && message.error !== undefined) p.reject(EscouadeError.from(message.error));
    else p.resolve(message.result);
  }

  // A request's answer, or undefined for a notification: at once when `serve` gave it at once.
  private serveOne(message: unknown): Served | Waiting {
    const m = message as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
    const isObject = typeof message === 'object' && message !== null && !Array.isArray(message);
    const hasId = isObject && 'id' in m;
    const idOk = hasId && (typeof m.id === 'string' || typeof m.id === 'number' || m.id === null);
    if (!isObject || m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (hasId && !idOk)) {
      return [errorAnswer(idOk ? (m.id as Id) : null, ErrorCode.invalidRequest, 'not a JSON-RPC 2.0 request'), undefined];
    }
    const incoming: Incoming = hasId
      ? { method: m.method, params: m.params, id: m.id as Id }
      : { method: m.method, params: m.params };
    const id = hasId ? (m.id as Id) : undefined;
    let reply: Reply | undefined | Later;
    try {
      reply = this.serve(incoming);
    } catch (e) {
      return answerOf(id, { error: asError(incoming.method, e) });
    }
    if (reply instanceof Later) return new Waiting(id, incoming.method, reply);
    return answerOf(id, reply);
  }
}

// Gives `done` the answer of `w` in the job that takes its reply's value: a throw of the reply's
// making or a rejection as an error answer, a Later given by the reply waited for in turn.
function answerWhenDone(w: Waiting, later: Later, done: (served: Served) => void): void {
  Promise.resolve(later.value).then(
    (value) => {
      let reply: Reply | undefined | Later;
      try {
        reply = later.reply(value);
      } catch (e) {
        reply = { error: asError(w.method, e) };
      }
      if (reply instanceof Later) answerWhenDone(w, reply, done);
      else done(answerOf(w.id, reply));
    },
    (e: unknown) => done(answerOf(w.id, { error: asError(w.method, e) })),
  );
}

// A batch's member as a promise of its answer (a batch is answered once all of them are).
function batchAnswer(s: Served | Waiting): Served | Promise<Served> {
  if (!(s instanceof Waiting)) return s;
  return new Promise((resolve) => answerWhenDone(s, s.later, resolve));
}

/** What a handler threw, as the error to answer: its own code when it is an EscouadeError. */
export function asError(method: string, e: unknown): EscouadeError {
  if (e instanceof EscouadeError) return e;
  return new EscouadeError(ErrorCode.internal, `${method}: ${describe(e)}`);
}

export function describe(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

// What answers a message whose id is `id` (undefined: a notification, which has no answer).
function answerOf(id: Id | undefined, reply: Reply | undefined): Served {
  const after = reply?.after;
  if (id === undefined) return [undefined, after];
  if (reply === undefined) return [{ jsonrpc: '2.0', id, result: null }, after];
  if ('error' in reply) return [errorAnswer(id, reply.error.code, reply.error.message, reply.error.data), after];
  return [{ jsonrpc: '2.0', id, result: reply.result === undefined ? null : reply.result }, after];
}

function errorAnswer(id: Id, code: number, message: string, data?: unknown): object {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

function isAnswer(m: unknown): m is { id?: unknown; result?: unknown; error?: unknown } {
  return (
    typeof m === 'object' && m !== null && !Array.isArray(m) && !('method' in m) && ('result' in m || 'error' in m)
  );
}
