// An Escouade in memory, to test a plugin without a host: it sends initialize, facts, decisions
// and any request as Escouade would, answers the plugin's calls (secrets, settings, its files,
// any method given a handler) and keeps its journal lines. `import { TestEscouade } from
// '@escouade-dev/plugin/testing'`.

import { EscouadeError } from './errors';
import type { Plugin, Connection } from './plugin';
import {
  ErrorCode,
  protocolVersion,
  type DecideParams,
  type Decision,
  type Fact,
  type InitializeParams,
  type InitializeResult,
  type LogParams,
} from './protocol';
import type { Transport } from './transport';

export interface TestOptions {
  /** The id given at initialize (default: dev.example.test). */
  id?: string;
  /** The plugin's version given at initialize (default: 0.1.0). */
  version?: string;
  /** The UI language given at initialize (default: en). */
  lang?: string;
  /** secrets/get answers these; a key without a value answers null. */
  secrets?: { [key: string]: string };
  /** settings/get answers these... */
  settings?: { [key: string]: string | number | boolean };
  /** ...with a project's own over them, when the call names the project. */
  projectSettings?: { [project: string]: { [key: string]: string | number | boolean } };
  /** files/read answers these texts (path relative to the plugin's folder); others -32005. */
  files?: { [path: string]: string };
  /** Handlers for any other method the plugin calls (fs/*, proc/*, net/fetch...). */
  handlers?: { [method: string]: (params: unknown) => unknown };
}

/** A fact, with what a test leaves out filled in (version 1, the next seq, now, data {}). */
export type TestFact = Partial<Fact> & Pick<Fact, 'name'>;

export class TestEscouade {
  /** What the plugin wrote in its journal with log, in order. */
  readonly logs: LogParams[] = [];
  /** Every message the plugin wrote, parsed, in order (batches as arrays). */
  readonly written: unknown[] = [];
  /** The exit code, once the plugin has ended. */
  exitCode: number | undefined;

  private readonly connection: Connection;
  private deliver!: (line: string) => void;
  private endInput!: () => void;
  private nextId = 1;
  private seq = 0;
  private readonly waiting = new Map<string | number, { resolve: (v: unknown) => void; reject: (e: EscouadeError) => void }>();
  private readonly handlers = new Map<string, (params: unknown) => unknown>();

  constructor(
    plugin: Plugin,
    private readonly options: TestOptions = {},
  ) {
    for (const [m, h] of Object.entries(options.handlers ?? {})) this.handlers.set(m, h);
    const transport: Transport = {
      start: (line, end) => {
        this.deliver = line;
        this.endInput = end;
      },
      write: (text) => this.heard(text),
      exit: (code) => {
        this.exitCode = code;
      },
    };
    this.connection = plugin.connect(transport);
    void this.connection.ended.then((code) => {
      this.exitCode ??= code;
    });
  }

  /** Serves `method` for the plugin from now on (its params in, its result out; throw an EscouadeError to refuse). */
  handle(method: string, handler: (params: unknown) => unknown): this {
    this.handlers.set(method, handler);
    return this;
  }

  /** initialize, then waits for the plugin's start handlers. */
  async start(params?: Partial<InitializeParams>): Promise<InitializeResult> {
    const init: InitializeParams = {
      protocolVersion,
      escouade: { version: '2.2.0' },
      plugin: { id: this.options.id ?? 'dev.example.test', version: this.options.version ?? '0.1.0' },
      lang: this.options.lang ?? 'en',
      capabilities: { batch: true, secrets: true, log: true, attach: true },
      ...params,
    };
    const result = (await this.request('initialize', init)) as InitializeResult;
    await this.connection.started();
    await this.idle();
    return result;
  }

  /** A permissions/decide, with a project when none is given. */
  async decide(params: Partial<DecideParams> & Pick<DecideParams, 'request'>): Promise<Decision> {
    const full: DecideParams = { project: { id: 'p1', name: 'Project One', private: false }, ...params };
    return (await this.request('permissions/decide', full)) as Decision;
  }

  /** An events/fact; resolves once the plugin's handlers are done with it. */
  async fact(fact: TestFact): Promise<void> {
    const full: Fact = { version: 1, seq: ++this.seq, at: new Date().toISOString(), data: {}, ...fact };
    this.deliver(JSON.stringify({ jsonrpc: '2.0', method: 'events/fact', params: full }));
    await this.idle();
  }

  /** Any request to the plugin: its result, or a rejection with its EscouadeError. */
  request(method: string, params?: unknown): Promise<unknown> {
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.deliver(JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }));
    return answer;
  }

  /** Any notification to the plugin; resolves once it has been served. */
  async notify(method: string, params?: unknown): Promise<void> {
    this.deliver(JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }));
    await this.idle();
  }

  /** A notification sent at once, without waiting for the plugin (a program's output, say). */
  tell(method: string, params?: unknown): void {
    this.deliver(JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }));
  }

  /** A raw line, as Escouade could send any: what the plugin wrote back while serving it. */
  async line(text: string): Promise<unknown[]> {
    const from = this.written.length;
    this.deliver(text);
    await this.idle();
    return this.written.slice(from);
  }

  /** shutdown; resolves with the plugin's exit code. */
  async shutdown(): Promise<number> {
    await this.request('shutdown', null);
    return this.connection.ended;
  }

  /** Ends the plugin's input, as when Escouade closes its end of the pipe. */
  async closeInput(): Promise<number> {
    this.endInput();
    return this.connection.ended;
  }

  /** Resolves once the plugin serves nothing and no call of its waits. */
  async idle(): Promise<void> {
    for (let i = 0; i < 4; ++i) {
      await this.connection.idle();
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
    }
  }

  private heard(text: string): void {
    const message: unknown = JSON.parse(text);
    this.written.push(message);
    for (const m of Array.isArray(message) ? message : [message]) this.take(m as Message);
  }

  private take(m: Message): void {
    if (m.method === undefined) {
      const w = this.waiting.get(m.id as string | number);
      if (!w) return;
      this.waiting.delete(m.id as string | number);
      if (m.error) w.reject(EscouadeError.from(m.error));
      else w.resolve(m.result);
      return;
    }
    if (m.id === undefined) {
      if (m.method === 'log') this.logs.push(m.params as LogParams);
      else void this.serve(m.method, m.params).catch(() => undefined);
      return;
    }
    const id = m.id;
    void this.serve(m.method, m.params).then(
      (result) => this.deliver(JSON.stringify({ jsonrpc: '2.0', id, result: result === undefined ? null : result })),
      (e: unknown) => {
        const error = EscouadeError.from(e);
        this.deliver(JSON.stringify({ jsonrpc: '2.0', id, error: { code: error.code, message: error.message } }));
      },
    );
  }

  private async serve(method: string, params: unknown): Promise<unknown> {
    const handler = this.handlers.get(method);
    if (handler) return handler(params);
    const p = (params ?? {}) as { key?: string; project?: string; path?: string };
    // A table's own entry only: a key named like an object property ("__proto__") is none.
    const own = <T>(table: { [k: string]: T } | undefined, key: string | undefined): T | undefined =>
      table !== undefined && key !== undefined && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
    switch (method) {
      case 'secrets/get':
        return own(this.options.secrets, p.key) ?? null;
      case 'settings/get':
        return { ...this.options.settings, ...own(this.options.projectSettings, p.project) };
      case 'files/read': {
        const text = own(this.options.files, p.path);
        if (text === undefined) throw new EscouadeError(ErrorCode.notFound, `${p.path}: no such file in the plugin's folder`);
        return text;
      }
      default:
        throw new EscouadeError(ErrorCode.methodNotFound, `${method}: not served by this TestEscouade (give it a handler)`);
    }
  }
}

interface Message {
  method?: string;
  id?: string | number | null;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}
