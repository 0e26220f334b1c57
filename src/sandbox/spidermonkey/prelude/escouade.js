
  // escouade.fs and escouade.proc: the files under an agent's roots and the allowlisted programs,
  // over fs/* and proc/* (docs/files-and-programs.md, "In run.js"). The host judges every path
  // and every command; the prelude only speaks for the bundle. Its requests' ids carry a prefix
  // of their own, made at random when the instance starts; a proc/out or proc/exit is the
  // prelude's only when it names a program the prelude started (or may have: one that comes
  // while a spawn of the prelude's waits for its answer is held until that answer tells).
  const callPrefix = 'escouade-call:' + Math.random().toString(36).slice(2, 10) +
                    Math.random().toString(36).slice(2, 10) + ':';
  let callCount = 0;
  const callAsked = new Map();   // the prelude's requests not answered yet -> their callbacks
  const programs = new Map();   // the host's proc -> its Program
  const early = [];             // proc/out and proc/exit that came before their spawn's answer
  let spawning = 0;             // proc/spawn of the prelude's not answered yet

  // A refusal or a failure of the host: an Error whose message is the host's sentence and whose
  // code is the protocol's (-32003 refused, -32004 failed, -32005 not found).
  const hostError = (e) => {
    const error = new Error(e && typeof e.message === 'string' ? e.message : 'Escouade refused');
    error.code = e && typeof e.code === 'number' ? e.code : -32004;
    return error;
  };
  const ask = (method, params) => new Promise((resolve, reject) => {
    const id = callPrefix + ++callCount;
    callAsked.set(id, { resolve, reject: (e) => reject(hostError(e)) });
    sendOwn({ jsonrpc: '2.0', id, method, params });
    updateInput();
  });
  // What names a file: {root, path, agent}, or a path alone when it is absolute.
  const place = (where) => {
    const w = typeof where === 'string' ? { path: where } : { ...where };
    if (typeof w.path !== 'string') throw new TypeError('a path is a string');
    const out = { path: w.path };
    if (w.root !== undefined) out.root = w.root;
    if (w.agent !== undefined) out.agent = w.agent;
    return out;
  };

  const fs = Object.freeze({
    // { text } or { dataBase64 }, as fs/read answers.
    read: (where) => ask('fs/read', place(where)),
    // The file as text; a file that is not UTF-8 is decoded with U+FFFD in place of bad bytes.
    readText: async (where) => {
      const r = await ask('fs/read', place(where));
      return typeof r.text === 'string' ? r.text : decodeUtf8(fromBase64(r.dataBase64));
    },
    // The file as bytes.
    readBytes: async (where) => {
      const r = await ask('fs/read', place(where));
      return typeof r.text === 'string' ? encodeUtf8(r.text) : fromBase64(r.dataBase64);
    },
    // data: a string, or bytes (a Uint8Array or an ArrayBuffer). { path, bytes } as written.
    write: (where, data, options) => {
      const params = place(where);
      if (typeof data === 'string') params.text = data;
      else if (data instanceof Uint8Array) params.dataBase64 = toBase64(data);
      else if (data instanceof ArrayBuffer) params.dataBase64 = toBase64(new Uint8Array(data));
      else throw new TypeError('fs.write writes a string or bytes');
      if (options && options.append) params.append = true;
      return ask('fs/write', params);
    },
    append: (where, data) => fs.write(where, data, { append: true }),
    stat: (where) => ask('fs/stat', place(where)),
    list: (where) => ask('fs/list', place(where)),
    canon: async (where) => (await ask('fs/canon', place(where))).path,
  });

  // The text of a program's stream, as an async iterable: each proc/out's text as it comes.
  class OutputStream {
    constructor() { this.pieces = []; this.waiters = []; this.ended = false; this.listeners = []; }
    put(text) {
      for (const f of this.listeners) f(text);
      if (this.waiters.length) this.waiters.shift()({ value: text, done: false });
      else this.pieces.push(text);
    }
    end() {
      this.ended = true;
      while (this.waiters.length) this.waiters.shift()({ value: undefined, done: true });
    }
    [Symbol.asyncIterator]() {
      return {
        next: () => {
          if (this.pieces.length) return Promise.resolve({ value: this.pieces.shift(), done: false });
          if (this.ended) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => this.waiters.push(resolve));
        },
        [Symbol.asyncIterator]() { return this; },
      };
    }
  }

  // A program proc/spawn started: its output as events ('stdout', 'stderr', 'exit') and as async
  // iterables (stdout, stderr), its end as a promise (exited, {code}: null when it was killed).
  class Program extends Emitter {
    constructor(proc) {
      super();
      this.id = proc;
      this.stdout = new OutputStream();
      this.stderr = new OutputStream();
      this.code = undefined;
      this.stdout.listeners.push((t) => this.emit('stdout', t));
      this.stderr.listeners.push((t) => this.emit('stderr', t));
      this.exited = new Promise((resolve) => { this.settle = resolve; });
    }
    // Writes on its input; fails past 1 MiB it has not read.
    write(data) { return ask('proc/write', { proc: this.id, data: String(data) }); }
    // Ends its input, after data when given.
    end(data) {
      const params = { proc: this.id, close: true };
      if (data !== undefined) params.data = String(data);
      return ask('proc/write', params);
    }
    kill() { return ask('proc/kill', { proc: this.id }); }
    out(stream, text) { (stream === 'stderr' ? this.stderr : this.stdout).put(text); }
    finish(code) {
      programs.delete(this.id);
      this.code = code;
      this.stdout.end();
      this.stderr.end();
      this.emit('exit', code);
      this.settle({ code });
      updateInput();
    }
  }

  const tell = (p, m) => {
    if (m.method === 'proc/out') p.out(m.params.stream, m.params.data);
    else p.finish(m.params.code === undefined ? null : m.params.code);
  };
  const spawn = async (options) => {
    if (!options || typeof options.command !== 'string')
      throw new TypeError('proc.spawn takes { command, args, dir, agent, project, env }');
    const params = { command: options.command };
    for (const k of ['args', 'dir', 'agent', 'project', 'env'])
      if (options[k] !== undefined) params[k] = options[k];
    ++spawning;
    let result;
    try {
      result = await ask('proc/spawn', params);
    } finally {
      --spawning;
    }
    const p = new Program(result.proc);
    programs.set(p.id, p);
    // What came before the answer, in order; the rest of the held lines once none waits.
    for (let i = 0; i < early.length;) {
      if (early[i].params.proc === p.id) tell(p, early.splice(i, 1)[0]); else i++;
    }
    if (spawning === 0 && early.length) {
      const lines = early.splice(0).map((m) => stringify(m));
      for (const line of lines) stdin.emit('data', line + '\n');
    }
    updateInput();
    return p;
  };
  // Runs a program to its end: { code, stdout, stderr } (the texts whole).
  const run = async (options) => {
    const p = await spawn(options);
    let stdout = '', stderr = '';
    p.on('stdout', (t) => { stdout += t; });
    p.on('stderr', (t) => { stderr += t; });
    if (options.input !== undefined) await p.end(options.input);
    const { code } = await p.exited;
    return { code, stdout, stderr };
  };
  const proc = Object.freeze({ spawn, run });
  const escouade = Object.freeze({ fs, proc });

  keepers.push(() => callAsked.size > 0 || programs.size > 0 || early.length > 0);
  ownInputs.push((line) => {
    if (!line.includes(callPrefix) && !line.includes('"proc/')) return false;
    let m;
    try { m = parse(line); } catch (e) { return false; }
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
    if (m.method === 'proc/out' || m.method === 'proc/exit') {
      const p = m.params !== null && typeof m.params === 'object' ? m.params : {};
      const program = programs.get(p.proc);
      if (program !== undefined) { tell(program, m); return true; }
      if (spawning > 0) { early.push(m); return true; }
      return false;
    }
    if (m.method !== undefined || typeof m.id !== 'string' || !callAsked.has(m.id)) return false;
    const asked = callAsked.get(m.id);
    callAsked.delete(m.id);
    updateInput();
    if (m.error !== undefined) asked.reject(m.error); else asked.resolve(m.result);
    return true;
  });
