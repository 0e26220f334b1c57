// The run.js prelude's beginning (prelude.hpp). The natives' object is the prelude's alone: nothing
// it gives the bundle holds it, and the two modules reach what they export through a hidden
// global that the instance deletes once the bundle's modules are evaluated. The parts (timers.js,
// text.js, url.js, net.js) run in the same function, after this beginning and before end.js: they see
// its names (write, sendOwn, updateInput...).
(function (host) {
  'use strict';
  const write = host.write, wantInput = host.wantInput, hostExit = host.exit;
  const readFile = host.readFile, folder = host.folder;
  // The prelude's own reading of its messages: a bundle that replaces JSON's functions does not
  // change them.
  const parse = JSON.parse, stringify = JSON.stringify;

  class Emitter {
    constructor() { Object.defineProperty(this, '_listeners', { value: new Map() }); }
    on(name, f) {
      if (typeof f !== 'function') throw new TypeError('the listener must be a function');
      if (!this._listeners.has(name)) this._listeners.set(name, []);
      this._listeners.get(name).push(f);
      this._changed && this._changed();
      return this;
    }
    addListener(name, f) { return this.on(name, f); }
    once(name, f) {
      const once = (...args) => { this.off(name, once); f.apply(this, args); };
      once.listener = f;
      return this.on(name, once);
    }
    off(name, f) {
      const list = this._listeners.get(name);
      if (list) {
        const i = list.findIndex((g) => g === f || g.listener === f);
        if (i >= 0) list.splice(i, 1);
      }
      this._changed && this._changed();
      return this;
    }
    removeListener(name, f) { return this.off(name, f); }
    removeAllListeners(name) {
      if (name === undefined) this._listeners.clear(); else this._listeners.delete(name);
      this._changed && this._changed();
      return this;
    }
    emit(name, ...args) {
      const list = this._listeners.get(name);
      if (!list || list.length === 0) return false;
      // The listeners as they were when it began: one is called as it is, more from a copy
      // (a listener may add or take one off meanwhile).
      if (list.length === 1) list[0].apply(this, args);
      else for (const f of list.slice()) f.apply(this, args);
      return true;
    }
    listenerCount(name) { const l = this._listeners.get(name); return l ? l.length : 0; }
  }

  // process.stdin: the lines Escouade sends, each a 'data' chunk with its '\n'. It is read while
  // something listens to it; once nothing does, the instance ends when it has nothing left to do.
  // Pending timers keep it reading too (their timer/fired come as input): the timers' part sets
  // keepers and ownInputs, the lines of input that are the prelude's own.
  let inputEnded = false;
  // Each part that waits for input of its own (the timers, the network) adds what keeps the
  // instance reading, and its reading of a line: true when the line was the part's own. A line
  // reaches them only when it holds one of the marks the helper looks for
  // (sandbox/prelude_marks.hpp: an id beginning with "escouade-", a net/, ws/, proc/ or
  // timer/fired method): a part whose lines carry another mark must add it there.
  const keepers = [];
  const ownInputs = [];
  const keptAlive = () => keepers.some((f) => f());
  const ownInput = (line) => ownInputs.some((f) => f(line));
  const stdin = new Emitter();
  // The instance is told only when it changes (a fetch asked it four times a turn, each a call
  // out of the engine).
  let wanted = null;
  const updateInput = () => {
    const want = !inputEnded && (stdin.listenerCount('data') > 0 || keptAlive());
    if (want === wanted) return;
    wanted = want;
    wantInput(want);
  };
  Object.defineProperty(stdin, '_changed', { value: updateInput });
  Object.assign(stdin, {
    fd: 0, isTTY: false, readable: true,
    setEncoding() { return stdin; }, resume() { return stdin; }, pause() { return stdin; },
    ref() { return stdin; }, unref() { return stdin; },
  });

  // A chunk of bytes is UTF-8 (TextDecoder, prelude_text.cpp's part, is defined by then).
  const text = (s) =>
    typeof s === 'string' ? s : s instanceof Uint8Array ? decodeUtf8(s) : String(s);
  // The protocol's lines: the bundle's, and the prelude's own (timer/set, timer/cancel). A line
  // of the prelude waits while the bundle is in the middle of one of its own, so that it never
  // cuts it; it goes out as soon as the bundle ends its line.
  let midLine = false;
  const ownLines = [];
  const writeOut = (s) => {
    if (s.length === 0) return;
    write(1, s);
    midLine = s.charCodeAt(s.length - 1) !== 10;
    if (!midLine && ownLines.length) {
      write(1, ownLines.join(''));
      ownLines.length = 0;
    }
  };
  const sendOwn = (message) => {
    const line = stringify(message) + '\n';
    if (midLine) ownLines.push(line); else write(1, line);
  };
  const writable = (fd) => {
    const w = new Emitter();
    const put = fd === 1 ? writeOut : (s) => write(2, s);
    Object.assign(w, {
      fd, isTTY: false, writable: true,
      write(chunk, encoding, callback) {
        put(text(chunk));
        const cb = typeof encoding === 'function' ? encoding : callback;
        if (typeof cb === 'function') queueMicrotask(() => cb());
        return true;
      },
      end(chunk) { if (chunk !== undefined) put(text(chunk)); return w; },
    });
    return w;
  };

  const inspect = (v) => {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return v.stack ? `${v}\n${v.stack}` : String(v);
    if (typeof v === 'object' && v !== null) {
      try { return JSON.stringify(v); } catch (e) { return String(v); }
    }
    return String(v);
  };
  const say = (...args) => write(2, args.map(inspect).join(' ') + '\n');
  const console = {
    log: say, info: say, warn: say, error: say, debug: say, trace: say,
  };

  const exit = (code) => {
    const c = code === undefined ? process.exitCode : code;
    hostExit(c === undefined || c === null ? 0 : Number(c) | 0);
  };
  const process = {
    stdin, stdout: writable(1), stderr: writable(2),
    env: {}, argv: ['escouade', 'plugin'], platform: 'escouade', versions: {},
    exitCode: undefined, exit,
    cwd() { return folder; },
    nextTick(f, ...args) { queueMicrotask(() => f(...args)); },
    on() { return process; }, once() { return process; }, off() { return process; },
  };

  const queueMicrotask = (f) => {
    if (typeof f !== 'function') throw new TypeError('queueMicrotask takes a function');
    Promise.resolve().then(() => f());
  };

  // node:readline over process.stdin: 'line' and 'close' events, and async iteration.
  const createInterface = (options) => {
    const input = options && options.input !== undefined ? options.input : options;
    if (input !== stdin)
      throw new TypeError('node:readline in the sandbox reads process.stdin only');
    const rl = new Emitter();
    let pending = '', closed = false, iterating = false;
    const queue = [], waiters = [];
    const deliver = (line) => {
      if (closed) return;
      rl.emit('line', line);
      if (!iterating) return;
      if (waiters.length) waiters.shift()({ value: line, done: false });
      else queue.push(line);
    };
    const onData = (chunk) => {
      // A chunk is most often one whole line (the helper gives each line of input as one):
      // delivered without joining it to what is pending and cutting it out again.
      if (pending === '' && !closed && typeof chunk === 'string') {
        const end = chunk.indexOf('\n');
        if (end === chunk.length - 1) {
          deliver(chunk.slice(0, end > 0 && chunk.charCodeAt(end - 1) === 13 ? end - 1 : end));
          return;
        }
      }
      pending += chunk;
      let i;
      while (!closed && (i = pending.indexOf('\n')) >= 0) {
        let line = pending.slice(0, i);
        pending = pending.slice(i + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        deliver(line);
      }
    };
    const onEnd = () => {
      if (pending.length) deliver(pending);
      pending = '';
      close();
    };
    const close = () => {
      if (closed) return;
      closed = true;
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      rl.emit('close');
      while (waiters.length) waiters.shift()({ value: undefined, done: true });
    };
    Object.assign(rl, {
      terminal: false, input: stdin,
      close, pause() { return rl; }, resume() { return rl; },
      setPrompt() {}, prompt() {},
      [Symbol.asyncIterator]() {
        iterating = true;
        return {
          next() {
            if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
            if (closed) return Promise.resolve({ value: undefined, done: true });
            return new Promise((resolve) => waiters.push(resolve));
          },
          return() { close(); return Promise.resolve({ value: undefined, done: true }); },
          [Symbol.asyncIterator]() { return this; },
        };
      },
    });
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    return rl;
  };

  // node:fs: readFileSync of the JSON files at the plugin's root given at its start.
  const fsError = (code, message, path) => {
    const e = new Error(`${code}: ${message}, open '${path}'`);
    e.code = code; e.syscall = 'open'; e.path = path;
    e.errno = code === 'ENOENT' ? -2 : -13;
    return e;
  };
  const readFileSync = (path, options) => {
    let p = path;
    if (typeof p === 'object' && p !== null && typeof p.href === 'string') p = p.href;
    if (typeof p !== 'string')
      throw new TypeError('readFileSync takes a path or a file: URL in the sandbox');
    const asked = p;
    if (p.startsWith('file://')) p = decodeURIComponent(p.slice('file://'.length));
    if (p.startsWith(folder + '/')) p = p.slice(folder.length + 1);
    while (p.startsWith('./')) p = p.slice(2);
    const found = readFile(p);
    if (found === null) {
      if (p.includes('/') || p === 'escouade-plugin.json' || !p.endsWith('.json'))
        throw fsError('EACCES', 'permission denied (a sandboxed plugin reads only the JSON ' +
                      'files at its root, never its manifest)', asked);
      throw fsError('ENOENT', 'no such file or directory', asked);
    }
    // No Buffer in the sandbox: the text, whatever the encoding asked.
    void options;
    return found;
  };

