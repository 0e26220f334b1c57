// What a handler is given (`p`): the calls to Escouade, typed from the schema, with their delays.

import { fromBase64, toBase64 } from './base64';
import { EscouadeError } from './errors';
import { Program, Programs, type ProgramRun, type SpawnOptions } from './programs';
import {
  ErrorCode,
  methods,
  type FsListResult,
  type FsPath,
  type FsReadResult,
  type FsStatResult,
  type FsWriteParams,
  type FsWriteResult,
  type InitializeParams,
  type LogParams,
  type ParamsOf,
  type ResultOf,
  type ToEscouadeNotification,
  type ToEscouadeRequest,
} from './protocol';
import type { BatchCall, Session } from './session';

/** What the context calls Escouade through: the plugin's session. */
export type Caller = Pick<Session, 'call' | 'notify' | 'batch'>;

export type Level = LogParams['level'];

/** A line of the plugin's journal: `p.log('info', text)` or `p.log.info(text)`. */
export interface Log {
  (level: Level, message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Where a file is: a path relative to a root of permissions.files, or an absolute path. */
export type Where = FsPath | string;

/** Files under an agent's roots (fs/*): Escouade judges each path against permissions.files. */
export interface Files {
  /** { text } or, for a file that is not UTF-8, { dataBase64 }. */
  read(where: Where): Promise<FsReadResult>;
  /** The file as text (bytes that are not UTF-8 become U+FFFD). */
  readText(where: Where): Promise<string>;
  /** The file as bytes. */
  readBytes(where: Where): Promise<Uint8Array>;
  /** Writes (or with {append: true} appends) text or bytes; parent folders are made. */
  write(where: Where, data: string | Uint8Array | ArrayBuffer, options?: { append?: boolean }): Promise<FsWriteResult>;
  append(where: Where, data: string | Uint8Array | ArrayBuffer): Promise<FsWriteResult>;
  stat(where: Where): Promise<FsStatResult>;
  list(where: Where): Promise<FsListResult>;
  /** Its real path, links followed. */
  canon(where: Where): Promise<string>;
}

/** The programs of permissions.commands (proc/*), started by Escouade, never through a shell. */
export interface Proc {
  /** Starts a program: its output comes as events and async iterables on the Program. */
  spawn(options: SpawnOptions): Promise<Program>;
  /** Starts a program, gives it `input` (then closes its input) and waits for its end. */
  run(options: SpawnOptions & { input?: string }): Promise<ProgramRun>;
}

/** The context of every handler. */
export interface Context {
  /** The plugin's id, as its manifest and initialize say. */
  readonly pluginId: string;
  /** What Escouade said at the handshake: its version, the UI language, its capabilities. */
  readonly escouade: InitializeParams | undefined;
  /** The UI language (fr, en), for text the plugin shows the user. */
  readonly lang: string | undefined;
  /** Whether this instance runs inside Escouade's sandbox (run.js) rather than under Node. */
  readonly sandboxed: boolean;
  /** One of the plugin's secrets (permissions.secrets); null when none is kept. */
  secret(key: string): Promise<string | null>;
  /** The plugin's settings; a project's .escouade.yml over the user's when `project` is given. */
  settings(project?: string): Promise<{ [key: string]: unknown }>;
  /** A file of the plugin's own folder, as UTF-8 text (files/read). */
  file(path: string): Promise<string>;
  readonly log: Log;
  readonly fs: Files;
  readonly proc: Proc;
  /** HTTP: Escouade's (net/fetch) inside the sandbox, Node's own in a process. */
  readonly fetch: typeof fetch;
  /** Any request to Escouade, typed when the schema has it. */
  call<M extends ToEscouadeRequest>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  call(method: string, params?: unknown): Promise<unknown>;
  /** Any notification to Escouade. */
  notify<M extends ToEscouadeNotification>(method: M, params: ParamsOf<M>): void;
  notify(method: string, params?: unknown): void;
  /** Several requests in one message; each promise settles with its own answer. */
  batch(calls: readonly BatchCall[]): Promise<unknown>[];
}

/** How long to wait for `method`'s answer: the schema's delay, else its default. */
export function delayOf(method: string): number {
  const info = (methods as { readonly [m: string]: { timeoutMs: number } | undefined })[method];
  return info ? info.timeoutMs : 5000;
}

/** @internal The context the Plugin gives its handlers. */
export function makeContext(
  session: Caller,
  programs: Programs,
  who: { pluginId(): string; init(): InitializeParams | undefined; sandboxed: boolean },
): Context {
  const call = (method: string, params?: unknown): Promise<unknown> =>
    session.call(method, params, delayOf(method));
  const notify = (method: string, params?: unknown): void => session.notify(method, params);

  const log = ((level: Level, message: string) => notify('log', { level, message })) as Log;
  log.debug = (m) => log('debug', m);
  log.info = (m) => log('info', m);
  log.warn = (m) => log('warn', m);
  log.error = (m) => log('error', m);

  const place = (where: Where): FsPath => {
    if (typeof where === 'string') return { path: where };
    if (typeof where !== 'object' || where === null || typeof where.path !== 'string')
      throw new TypeError('a file is named by a path, or {root, path, agent}');
    const out: FsPath = { path: where.path };
    if (where.root !== undefined) out.root = where.root;
    if (where.agent !== undefined) out.agent = where.agent;
    return out;
  };
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const read = (where: Where) => call('fs/read', place(where)) as Promise<FsReadResult>;
  const fs: Files = {
    read,
    async readText(where) {
      const r = await read(where);
      return typeof r.text === 'string' ? r.text : decoder.decode(fromBase64(r.dataBase64 ?? ''));
    },
    async readBytes(where) {
      const r = await read(where);
      return typeof r.text === 'string' ? encoder.encode(r.text) : fromBase64(r.dataBase64 ?? '');
    },
    write(where, data, options) {
      const params: FsWriteParams = place(where);
      if (typeof data === 'string') params.text = data;
      else if (data instanceof Uint8Array) params.dataBase64 = toBase64(data);
      else if (data instanceof ArrayBuffer) params.dataBase64 = toBase64(new Uint8Array(data));
      else throw new TypeError('fs.write writes a string or bytes (Uint8Array, ArrayBuffer)');
      if (options?.append) params.append = true;
      return call('fs/write', params) as Promise<FsWriteResult>;
    },
    append(where, data) {
      return fs.write(where, data, { append: true });
    },
    stat: (where) => call('fs/stat', place(where)) as Promise<FsStatResult>,
    list: (where) => call('fs/list', place(where)) as Promise<FsListResult>,
    async canon(where) {
      return ((await call('fs/canon', place(where))) as { path: string }).path;
    },
  };

  const programCalls = {
    async write(proc: number, data: string | undefined, close: boolean) {
      const params: { proc: number; data?: string; close?: boolean } = { proc };
      if (data !== undefined) params.data = String(data);
      if (close) params.close = true;
      await call('proc/write', params);
    },
    async kill(proc: number) {
      await call('proc/kill', { proc });
    },
  };
  const spawn = (options: SpawnOptions): Promise<Program> => {
    if (typeof options !== 'object' || options === null || typeof options.command !== 'string')
      throw new TypeError('proc.spawn takes { command, args, dir, agent, project, env }');
    const params: SpawnOptions = { command: options.command };
    if (options.args !== undefined) params.args = options.args;
    if (options.dir !== undefined) params.dir = options.dir;
    if (options.agent !== undefined) params.agent = options.agent;
    if (options.project !== undefined) params.project = options.project;
    if (options.env !== undefined) params.env = options.env;
    const start = () => (call('proc/spawn', params) as Promise<{ proc: number }>).then((r) => r.proc);
    return programs.spawned(start, programCalls);
  };
  const proc: Proc = {
    spawn,
    async run(options) {
      const { input, ...rest } = options;
      const program = await spawn(rest);
      const stdout = program.stdout.text();
      const stderr = program.stderr.text();
      // A program that ends without reading its input makes the close fail: its end says more.
      const closed = program.end(input).catch(() => undefined);
      const { code } = await program.exited;
      await closed;
      return { code, stdout: await stdout, stderr: await stderr };
    },
  };

  return {
    get pluginId() {
      return who.pluginId();
    },
    get escouade() {
      return who.init();
    },
    get lang() {
      return who.init()?.lang;
    },
    sandboxed: who.sandboxed,
    async secret(key) {
      return (await call('secrets/get', { key })) as string | null;
    },
    async settings(project) {
      const found = await call('settings/get', project === undefined ? {} : { project });
      return typeof found === 'object' && found !== null ? (found as { [key: string]: unknown }) : {};
    },
    async file(path) {
      const text = await call('files/read', { path });
      if (typeof text !== 'string')
        throw new EscouadeError(ErrorCode.internal, `files/read: Escouade answered ${JSON.stringify(text)}, not a text`);
      return text;
    },
    log,
    fs,
    proc,
    fetch: ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args)) as typeof fetch,
    call: call as Context['call'],
    notify: notify as Context['notify'],
    batch: (calls) => session.batch(calls, delayOf),
  };
}

