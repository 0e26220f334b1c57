// A plugin: its handlers for what Escouade sends (initialize, facts, decisions, any method,
// shutdown), run over stdin and stdout by Node or inside Escouade's sandbox, the same source.

import { makeContext, type Context } from './context';
import { EscouadeError, invalidParams } from './errors';
import { Programs } from './programs';
import {
  ErrorCode,
  methods,
  protocolVersion,
  type DecideParams,
  type Decision,
  type Fact,
  type FactName,
  type InitializeParams,
  type InitializeResult,
  type ParamsOf,
  type ProcExitParams,
  type ProcOutParams,
  type ResultOf,
  type ToPluginNotification,
  type ToPluginRequest,
} from './protocol';
import { describe, Later, Session, type Incoming, type Reply } from './session';
import { inSandbox, stdioTransport, type Transport } from './transport';

/** A fact's name, `ticket.*` for every fact of a family, or `*` for all of them. */
export type FactPattern = FactName | '*' | `${string}.*`;

export type FactHandler = (fact: Fact, p: Context) => void | Promise<void>;
export type DecideHandler = (params: DecideParams, p: Context) => Decision | Promise<Decision>;
export type StartHandler = (p: Context) => void | Promise<void>;
type AnyHandler = (params: unknown, p: Context) => unknown;

export interface PluginOptions {
  /** The manifest's id; when given, a different id at initialize is said on stderr. */
  id?: string;
  /** Capabilities added to the answer to initialize (batch: true is always there). */
  capabilities?: { [name: string]: unknown };
}

/** What run() and connect() give back: the plugin's side of one session. */
export interface Connection {
  /** Resolves with the exit code once the plugin has ended (shutdown, or its input's end). */
  readonly ended: Promise<number>;
  /** Resolves once no incoming message is being served. */
  idle(): Promise<void>;
  /** Resolves once the start handlers are done (at once before initialize). */
  started(): Promise<void>;
  readonly context: Context;
}

type MethodInfo = (typeof methods)[keyof typeof methods];
// The schema's entry for `method`, never one of Object's own properties ("constructor").
const infoOf = (method: string): MethodInfo | undefined =>
  Object.prototype.hasOwnProperty.call(methods, method) ? (methods as { readonly [m: string]: MethodInfo })[method] : undefined;

// Escouade adds facts over time: a name this SDK does not know is not a problem (it reaches the
// handlers of its family and of all facts), so a fact is checked as if its name were known.
const checkFactParams = (params: unknown, at: string): string | null => {
  const p = params as { name?: unknown } | null;
  if (typeof p === 'object' && p !== null && !Array.isArray(p) && typeof p.name === 'string')
    return methods['events/fact'].checkParams({ ...p, name: 'agent.status' }, at);
  return methods['events/fact'].checkParams(params, at);
};

export class Plugin {
  private readonly factHandlers: { pattern: FactPattern; handler: FactHandler }[] = [];
  private readonly requests = new Map<string, AnyHandler>();
  private readonly notifications = new Map<string, AnyHandler>();
  private readonly starts: StartHandler[] = [];
  private readonly shutdowns: StartHandler[] = [];

  constructor(private readonly options: PluginOptions = {}) {}

  /** Runs once, right after the answer to initialize; facts and calls wait until it is done. */
  onStart(handler: StartHandler): this {
    this.starts.push(handler);
    return this;
  }

  /** Facts (events/fact): by name, by family (`ticket.*`), or all (`*`, or no pattern). */
  onFact(pattern: FactPattern, handler: FactHandler): this;
  onFact(handler: FactHandler): this;
  onFact(a: FactPattern | FactHandler, b?: FactHandler): this {
    if (typeof a === 'function') this.factHandlers.push({ pattern: '*', handler: a });
    else if (b) this.factHandlers.push({ pattern: a, handler: b });
    else throw new TypeError('onFact takes a pattern and a handler, or a handler');
    return this;
  }

  /** permissions/decide: answer allow(), deny() or ask(), each with a message. */
  onDecide(handler: DecideHandler): this {
    return this.on('permissions/decide', handler);
  }

  /** Runs before the plugin answers shutdown (within its 1000 ms), or when its input ends. */
  onShutdown(handler: StartHandler): this {
    this.shutdowns.push(handler);
    return this;
  }

  /** Any request Escouade sends: typed when the schema has it; params checked against it. */
  on<M extends ToPluginRequest>(method: M, handler: (params: ParamsOf<M>, p: Context) => ResultOf<M> | Promise<ResultOf<M>>): this;
  on(method: string, handler: (params: unknown, p: Context) => unknown): this;
  on(method: string, handler: AnyHandler): this {
    if (method === 'initialize' || method === 'shutdown')
      throw new TypeError(`${method} is answered by the SDK: use onStart or onShutdown`);
    this.requests.set(method, handler);
    return this;
  }

  /** Any notification Escouade sends (facts have onFact, programs' output their Program). */
  onNotification<M extends ToPluginNotification>(method: M, handler: (params: ParamsOf<M>, p: Context) => void | Promise<void>): this;
  onNotification(method: string, handler: (params: unknown, p: Context) => void | Promise<void>): this;
  onNotification(method: string, handler: AnyHandler): this {
    this.notifications.set(method, handler);
    return this;
  }

  /**
   * Speaks the protocol on stdin and stdout until shutdown or the input's end, then ends the
   * program. The same call under Node and inside the sandbox.
   */
  run(transport: Transport = stdioTransport()): Promise<number> {
    return this.connect(transport, true).ended;
  }

  /** The session without ending the program (tests: see @escouade-dev/plugin/testing). */
  connect(transport: Transport, exit = false): Connection {
    const sandboxed = inSandbox();
    const trace = (what: string) => {
      try {
        process.stderr.write(`[@escouade-dev/plugin] ${what}\n`);
      } catch {
        // stderr gone: nothing else to say it on.
      }
    };
    let init: InitializeParams | undefined;
    let started: Promise<void> | undefined;
    // The start handlers are done: a request is served at once from then on.
    let startDone = false;
    let ending = false;
    let endWith!: (code: number) => void;
    const ended = new Promise<number>((resolve) => {
      endWith = resolve;
    });
    const finish = (code: number) => {
      if (ending) return;
      ending = true;
      endWith(code);
      if (exit) transport.exit(code);
    };
    const programs = new Programs(trace);
    let session!: Session;
    const context = makeContext(
      // The session is made below, once serve() exists: the context reaches it when it calls.
      {
        call: (m, p, t) => session.call(m, p, t),
        notify: (m, p) => session.notify(m, p),
        batch: (c, d) => session.batch(c, d),
      },
      programs,
      {
        pluginId: () => init?.plugin.id ?? this.options.id ?? '',
        init: () => init,
        sandboxed,
      },
    );
    const runAll = async (handlers: StartHandler[], what: string) => {
      for (const h of handlers) {
        try {
          await h(context);
        } catch (e) {
          trace(`${what} failed: ${describe(e)}`);
          context.log.error(`${what} failed: ${describe(e)}`);
        }
      }
    };
    let shutdownRan = false;
    const runShutdown = async () => {
      if (shutdownRan) return;
      shutdownRan = true;
      await runAll(this.shutdowns, 'the shutdown handler');
    };

    const serve = (m: Incoming): Reply | undefined | Later => {
      const info = infoOf(m.method);
      const isRequest = 'id' in m;
      if (m.method === 'initialize' && isRequest) {
        const problem = methods.initialize.checkParams(m.params, 'params');
        if (problem) throw invalidParams(problem);
        init = m.params as InitializeParams;
        if (this.options.id && init.plugin.id !== this.options.id)
          trace(`built as ${this.options.id}, started as ${init.plugin.id} (its manifest's id)`);
        const result: InitializeResult = {
          protocolVersion,
          capabilities: { ...this.options.capabilities, batch: true },
        };
        let begin!: () => void;
        const begun = new Promise<void>((resolve) => {
          begin = resolve;
        });
        started = begun
          .then(() => runAll(this.starts, 'the start handler'))
          .then(() => {
            startDone = true;
          });
        return { result, after: begin };
      }
      if (m.method === 'shutdown' && isRequest) return new Later(runShutdown(), () => ({ result: null, after: () => finish(0) }));
      if (info && info.direction === 'toPlugin') {
        const problem = m.method === 'events/fact' ? checkFactParams(m.params, 'params') : info.checkParams(m.params, 'params');
        if (problem) {
          if (isRequest) throw invalidParams(problem);
          trace(`${m.method} set aside: ${problem}`);
          context.log.warn(`${m.method} set aside: ${problem}`);
          return undefined;
        }
      }
      // A program's output is for the plugin's own calls: it never waits (a start handler may be
      // reading it).
      if (!isRequest && programs.take(m.method, m.params as ProcOutParams | ProcExitParams)) return undefined;
      // Everything else waits for the start handlers (the guard's rules loaded first).
      if (started && !startDone) return new Later(started, () => dispatch(m, info, isRequest));
      return dispatch(m, info, isRequest);
    };
    // A notification's handlers, or a request's handler with its answer given at once when the
    // handler returned a value (not a promise or another thenable, waited for as `await` would).
    const dispatch = (m: Incoming, info: MethodInfo | undefined, isRequest: boolean): Reply | undefined | Later => {
      if (!isRequest) {
        const waits = this.notified(m, context, trace);
        return waits && new Later(waits);
      }
      const handler = this.requests.get(m.method);
      if (!handler) {
        throw new EscouadeError(ErrorCode.methodNotFound, `${m.method}: not a method of ${context.pluginId || 'this plugin'}`);
      }
      const result = handler(m.params, context);
      if (isThenable(result)) return new Later(result, (r) => checked(m.method, info, r));
      return checked(m.method, info, result);
    };
    const checked = (method: string, info: MethodInfo | undefined, result: unknown): Reply => {
      if (info && info.direction === 'toPlugin') {
        const problem = info.checkResult(result, 'result');
        if (problem) throw new EscouadeError(ErrorCode.internal, `${method}: the handler's answer does not hold (${problem})`);
      }
      return { result: result === undefined ? null : result };
    };

    session = new Session(transport, serve, trace, !sandboxed);
    transport.start(
      (line) => session.take(line),
      () => {
        session.end();
        void session
          .idle()
          .then(runShutdown)
          .then(() => finish(0));
      },
    );
    return { ended, idle: () => session.idle(), started: () => started ?? Promise.resolve(), context };
  }

  // A notification's handlers, each after the one before it settled (as a loop of `await`s
  // would) but without a promise between those that returned a value: undefined when all did.
  private notified(m: Incoming, p: Context, trace: (what: string) => void): Promise<undefined> | undefined {
    const fact = m.method === 'events/fact' ? (m.params as Fact) : undefined;
    const name = fact ? fact.name : m.method;
    const failed = (e: unknown) => {
      trace(`the handler of ${name} failed: ${describe(e)}`);
      p.log.error(`the handler of ${name} failed: ${describe(e)}`);
    };
    if (fact) return this.factFrom(0, fact, p, failed);
    const handler = this.notifications.get(m.method);
    return handler ? settle(() => handler(m.params, p), failed) : undefined;
  }

  // The handlers of `fact` from the `i`th on.
  private factFrom(i: number, fact: Fact, p: Context, failed: (e: unknown) => void): Promise<undefined> | undefined {
    for (; i < this.factHandlers.length; ++i) {
      const { pattern, handler } = this.factHandlers[i]!;
      if (!matches(pattern, fact.name)) continue;
      const waits = settle(() => handler(fact, p), failed);
      const next = i + 1;
      if (waits) return waits.then(() => this.factFrom(next, fact, p, failed));
    }
    return undefined;
  }
}

// Calls `handler`; what it threw or its promise rejected with goes to `failed`. A promise that
// settles once the handler's does, or undefined when it returned a value (or threw).
function settle(handler: () => unknown, failed: (e: unknown) => void): Promise<undefined> | undefined {
  let result: unknown;
  try {
    result = handler();
  } catch (e) {
    failed(e);
    return undefined;
  }
  if (!isThenable(result)) return undefined;
  return Promise.resolve(result).then(
    () => undefined,
    (e: unknown) => {
      failed(e);
      return undefined;
    },
  );
}

// Whether `await v` would wait for `v`: a promise, or any object or function with a then().
function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** Whether a fact named `name` is one `pattern` takes. */
export function matches(pattern: FactPattern, name: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

