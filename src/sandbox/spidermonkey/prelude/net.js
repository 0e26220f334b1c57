
  // fetch, Headers, Request, Response, AbortController, AbortSignal and WebSocket over net/stream,
  // net/credit, net/cancel and ws/* (docs/network.md, "In run.js"). The host judges every URL and
  // every address; the prelude only speaks for the bundle. Its requests' ids carry a prefix made
  // at random when the instance starts, as the timers' do; a net/chunk, net/end, ws/message or
  // ws/closed is the prelude's only when it names a stream or a socket the prelude opened. The
  // rest is the bundle's.
  const kStreamsAtOnce = host.limits.streamsAtOnce;
  const kNetBytes = host.limits.netBytes;
  const netPrefix = 'escouade-net:' + Math.random().toString(36).slice(2, 10) +
                    Math.random().toString(36).slice(2, 10) + ':';
  let netCount = 0;
  const netAsked = new Map();   // the prelude's requests not answered yet -> their callbacks
  const streams = new Map();    // the host's stream -> its source (a Response's body)
  const sockets = new Map();    // the host's socket -> its WebSocket
  let openStreams = 0;          // net/stream asked or open, which the host bounds to 8
  const streamQueue = [];       // fetches waiting for one of them to end

  // A request of the prelude's whose answer goes to `resolve` or `reject`, called as the
  // answer's line is read; askNet makes them a promise's.
  const askNetThen = (method, params, resolve, reject) => {
    const id = netPrefix + ++netCount;
    netAsked.set(id, { resolve, reject });
    sendOwn({ jsonrpc: '2.0', id, method, params });
    updateInput();
  };
  const askNet = (method, params) =>
    new Promise((resolve, reject) => askNetThen(method, params, resolve, reject));
  const tellNet = (method, params) => sendOwn({ jsonrpc: '2.0', method, params });
  // A refusal or a failure of the host, as browsers give a failed fetch: a TypeError, its message
  // the host's sentence, its code in `cause`.
  const netError = (e) => {
    const error = new TypeError(e && typeof e.message === 'string' ? e.message : 'fetch failed');
    if (e && typeof e.code === 'number') error.cause = { code: e.code };
    return error;
  };

  const kBase64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const toBase64 = (bytes) => {
    let out = '';
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
      out += kBase64[(n >> 18) & 63] + kBase64[(n >> 12) & 63] +
             (i + 1 < bytes.length ? kBase64[(n >> 6) & 63] : '=') +
             (i + 2 < bytes.length ? kBase64[n & 63] : '=');
    }
    return out;
  };
  const fromBase64 = (text) => {
    const s = String(text).replace(/=+$/, '');
    const out = new Uint8Array(Math.floor((s.length * 3) / 4));
    let bits = 0, n = 0, at = 0;
    for (let i = 0; i < s.length; i++) {
      const v = kBase64.indexOf(s[i]);
      if (v < 0) throw new TypeError('Escouade sent bytes that are not base64');
      n = (n << 6) | v;
      bits += 6;
      if (bits >= 8) { bits -= 8; out[at++] = (n >> bits) & 0xff; }
    }
    return out.subarray(0, at);
  };
  const bytesText = (n) => n >= 1048576 && n % 1048576 === 0 ? `${n / 1048576} MiB`
                         : n >= 1024 && n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;

  // DOMException is the web's; the engine alone has none.
  const DOMExceptionOf = globalThis.DOMException || class DOMException extends Error {
    constructor(message = '', name = 'Error') {
      super(message);
      Object.defineProperty(this, 'name', { value: name, configurable: true, writable: true });
      this.code = name === 'AbortError' ? 20 : name === 'InvalidStateError' ? 11
                : name === 'SyntaxError' ? 12 : name === 'TimeoutError' ? 23 : 0;
    }
  };

  // A small EventTarget: what AbortSignal and WebSocket dispatch with.
  const listenersOf = Symbol('listeners');
  class Target {
    constructor() { Object.defineProperty(this, listenersOf, { value: new Map() }); }
    addEventListener(type, f, options) {
      if (typeof f !== 'function' && !(f && typeof f.handleEvent === 'function')) return;
      const list = this[listenersOf].get(type) || [];
      if (list.some((l) => l.f === f)) return;
      list.push({ f, once: Boolean(options && options.once) });
      this[listenersOf].set(type, list);
    }
    removeEventListener(type, f) {
      const list = this[listenersOf].get(type);
      if (list) this[listenersOf].set(type, list.filter((l) => l.f !== f));
    }
    dispatchEvent(event) {
      Object.defineProperty(event, 'target', { value: this, configurable: true });
      Object.defineProperty(event, 'currentTarget', { value: this, configurable: true });
      const handler = this['on' + event.type];
      if (typeof handler === 'function') handler.call(this, event);
      for (const l of [...(this[listenersOf].get(event.type) || [])]) {
        if (l.once) this.removeEventListener(event.type, l.f);
        if (typeof l.f === 'function') l.f.call(this, event); else l.f.handleEvent(event);
      }
      return true;
    }
  }
  const event = (type, fields) => Object.assign({ type }, fields);

  class AbortSignal extends Target {
    constructor(key) {
      if (key !== listenersOf) throw new TypeError('AbortSignal is made by an AbortController');
      super();
      this.aborted = false;
      this.reason = undefined;
      this.onabort = null;
    }
    throwIfAborted() { if (this.aborted) throw this.reason; }
    static abort(reason) {
      const c = new AbortController();
      c.abort(reason);
      return c.signal;
    }
    static timeout(ms) {
      const c = new AbortController();
      setTimeout(() => c.abort(new DOMExceptionOf('The operation timed out.', 'TimeoutError')),
                 ms).unref();
      return c.signal;
    }
    static any(signals) {
      const c = new AbortController();
      for (const s of signals) {
        if (s.aborted) { c.abort(s.reason); break; }
        s.addEventListener('abort', () => c.abort(s.reason), { once: true });
      }
      return c.signal;
    }
  }
  class AbortController {
    constructor() { this.signal = new AbortSignal(listenersOf); }
    abort(reason) {
      const s = this.signal;
      if (s.aborted) return;
      s.aborted = true;
      s.reason = reason !== undefined ? reason
               : new DOMExceptionOf('This operation was aborted', 'AbortError');
      s.dispatchEvent(event('abort'));
    }
  }

  const kToken = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const mapOf = Symbol('map');
  class Headers {
    constructor(init) {
      Object.defineProperty(this, mapOf, { value: new Map() });
      if (init === undefined || init === null) return;
      if (init instanceof Headers) { for (const [k, v] of init) this.append(k, v); return; }
      if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const [k, v, ...rest] = [...pair];
          if (rest.length || v === undefined)
            throw new TypeError('each header is a pair of a name and a value');
          this.append(k, v);
        }
        return;
      }
      for (const k of Object.keys(init)) this.append(k, init[k]);
    }
    static name_(n) {
      const name = String(n);
      if (!kToken.test(name)) throw new TypeError(`${name} is not a header name`);
      return name.toLowerCase();
    }
    static value_(v) {
      const s = String(v);
      // Trimmed only when it has something to trim at either end (most values have not).
      const value = s.length > 0 && (s.charCodeAt(0) <= 32 || s.charCodeAt(s.length - 1) <= 32)
                    ? s.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '') : s;
      if (/[\r\n\0]/.test(value)) throw new TypeError('a header value holds no line break');
      return value;
    }
    append(n, v) {
      const k = Headers.name_(n), value = Headers.value_(v);
      const had = this[mapOf].get(k);
      this[mapOf].set(k, had === undefined ? value : had + ', ' + value);
    }
    set(n, v) { this[mapOf].set(Headers.name_(n), Headers.value_(v)); }
    get(n) { const v = this[mapOf].get(Headers.name_(n)); return v === undefined ? null : v; }
    has(n) { return this[mapOf].has(Headers.name_(n)); }
    delete(n) { this[mapOf].delete(Headers.name_(n)); }
    forEach(f, self) { for (const [k, v] of this) f.call(self, v, k, this); }
    *entries() { yield* [...this[mapOf].entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)); }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [Symbol.iterator]() { return this.entries(); }
  }

  // What a body may be made of: the bytes the request sends (a string stays text).
  const bodyOf = (body, headers) => {
    if (body === undefined || body === null) return null;
    if (typeof body === 'string') return body;
    if (body instanceof URLSearchParams) {
      if (!headers.has('content-type'))
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      return body.toString();
    }
    if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
    if (ArrayBuffer.isView(body))
      return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
    throw new TypeError('a body in the sandbox is a string, URLSearchParams, an ArrayBuffer or ' +
                        'a typed array');
  };

  // The href of each URL text a request was made with lately. The standard's parser reads
  // nothing but its input, so the same text gives the same href; a plugin asks the same few
  // addresses again and again, and each read here costs about 4 us (Node's: 0.75 us). Texts
  // that are no URL are never kept: each one throws again.
  const kHrefsKept = 64;
  const kHrefKeptChars = 2048;
  const hrefsRead = new Map();
  const requestHref = (text) => {
    let href = hrefsRead.get(text);
    if (href !== undefined) return href;
    href = new URL(text).href;
    if (text.length <= kHrefKeptChars) {
      if (hrefsRead.size >= kHrefsKept) hrefsRead.clear();
      hrefsRead.set(text, href);
    }
    return href;
  };

  class Request {
    constructor(input, init) {
      const o = init === undefined || init === null ? {} : init;
      const from = input instanceof Request ? input : null;
      this.url = from ? from.url : requestHref(String(input));
      this.method = String(o.method !== undefined ? o.method : from ? from.method : 'GET');
      if (/^(get|head|post|put|delete|options|patch)$/i.test(this.method))
        this.method = this.method.toUpperCase();
      this.headers = new Headers(o.headers !== undefined ? o.headers : from ? from.headers : {});
      this.signal = o.signal !== undefined ? o.signal : from ? from.signal : null;
      this.redirect = 'manual';  // Escouade follows no redirect: the 3xx is the answer
      const body = o.body !== undefined ? o.body : from ? from._body : null;
      Object.defineProperty(this, '_body', { value: bodyOf(body, this.headers) });
      if (this._body !== null && (this.method === 'GET' || this.method === 'HEAD'))
        throw new TypeError(`a ${this.method} request has no body`);
    }
  }

  // A body as it comes: the pieces of a stream of the host's, or bytes held. A piece is text
  // (a string; or a Text, the bytes of a net/chunk's "data" as the helper read them, which
  // js_instance.cpp gives through feed.chunk without a string of the line) or bytes (a
  // Uint8Array). What is read is credited back (net/credit, in UTF-8 bytes) once kCreditStep
  // have been, so that no more than 256 KiB the bundle has not read wait: the host's window
  // never closes on what the bundle read, since what it holds back is less than a quarter of
  // it. A reader gets bytes; text() joins the texts as they are.
  const utf8Text = host.utf8Text;
  class Text {
    constructor(bytes) { this.bytes = bytes; }
  }
  const kCreditStep = 64 * 1024;
  const sizeOf = (piece) => (typeof piece === 'string' ? utf8Length(piece)
                             : piece instanceof Text ? piece.bytes.length : piece.length);
  const bytesOfPiece = (piece) => (typeof piece === 'string' ? encodeUtf8(piece)
                                   : piece instanceof Text ? piece.bytes : piece);
  const isText = (piece) => typeof piece === 'string' || piece instanceof Text;
  const textOf = (piece) => (typeof piece === 'string' ? piece : utf8Text(piece.bytes));
  // A body's bytes from its pieces, in one array.
  const bytesOfPieces = (pieces) => {
    const bytes = pieces.map(bytesOfPiece);
    const out = new Uint8Array(bytes.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of bytes) { out.set(p, at); at += p.length; }
    return out;
  };
  // A body's text from its pieces: joined when all are text, else decoded from their bytes.
  const textOfPieces = (pieces) => (pieces.every(isText) ? pieces.map(textOf).join('')
                                                         : decodeUtf8(bytesOfPieces(pieces)));
  class Source {
    constructor(id) {
      this.id = id;            // the host's stream; undefined for bytes held
      this.pieces = [];
      this.done = false;
      this.error = null;
      this.waiters = [];
      this.uncredited = 0;     // bytes read and not credited back yet, below kCreditStep
    }
    put(piece) {
      if (this.waiters.length) this.deliver(this.waiters.shift(), piece); else this.pieces.push(piece);
    }
    deliver(w, piece) {
      if (this.id !== undefined && streams.has(this.id)) {
        this.uncredited += sizeOf(piece);
        if (this.uncredited >= kCreditStep) {
          tellNet('net/credit', { stream: this.id, bytes: this.uncredited });
          this.uncredited = 0;
        }
      }
      w.resolve({ value: w.raw ? piece : bytesOfPiece(piece), done: false });
    }
    end(error) {
      if (this.done) return;
      this.done = true;
      this.error = error || null;
      for (const w of this.waiters.splice(0))
        if (this.error) w.reject(this.error); else w.resolve({ value: undefined, done: true });
    }
    // The next piece given to the waiter `w` ({resolve, reject, raw}): at once when one is
    // there or the body has ended, else when it comes.
    next(w) {
      if (this.pieces.length) return this.deliver(w, this.pieces.shift());
      if (this.done) {
        return this.error ? w.reject(this.error) : w.resolve({ value: undefined, done: true });
      }
      this.waiters.push(w);
    }
    // The next piece: bytes, or as it came when `raw`.
    read(raw) {
      return new Promise((resolve, reject) => this.next({ resolve, reject, raw }));
    }
    cancel(reason) {
      if (this.id !== undefined && streams.has(this.id)) {
        tellNet('net/cancel', { stream: this.id });
        streamEnded(this.id);
      }
      this.pieces = [];
      this.end(null);
      void reason;
    }
  }

  // The body a Response gives: a reader, and async iteration of its pieces (Uint8Array).
  class Body {
    constructor(source) { Object.defineProperty(this, '_source', { value: source }); this.locked = false; }
    getReader() {
      if (this.locked) throw new TypeError('the body is already being read');
      this.locked = true;
      const source = this._source;
      return {
        read: () => source.read(),
        cancel: (reason) => { source.cancel(reason); return Promise.resolve(); },
        releaseLock: () => { this.locked = false; },
        closed: new Promise(() => {}),
      };
    }
    cancel(reason) { this._source.cancel(reason); return Promise.resolve(); }
    async *[Symbol.asyncIterator]() {
      const reader = this.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally { reader.releaseLock(); }
    }
  }

  const sourceOf = Symbol('source');  // a Response made by fetch: the host's stream is its body
  class Response {
    constructor(body, init) {
      const o = init === undefined || init === null ? {} : init;
      this.status = o.status === undefined ? 200 : Number(o.status);
      this.statusText = o.statusText === undefined ? '' : String(o.statusText);
      this.headers = new Headers(o.headers);
      this.type = 'default';
      this.url = '';
      this.redirected = false;
      this.bodyUsed = false;
      let source = o[sourceOf];
      if (source === undefined) {
        source = new Source(undefined);
        const bytes = bodyOf(body, this.headers);
        if (bytes !== null) source.put(bytes);
        source.end(null);
      }
      Object.defineProperty(this, '_body', { value: new Body(source) });
    }
    get ok() { return this.status >= 200 && this.status <= 299; }
    get body() { return this._body; }
    async arrayBuffer() { const b = await this.bytes(); return b.buffer; }
    // The whole body as its pieces came, within limits.netBytes, given to `resolve`, or why not
    // to `reject`. The pieces are taken as they come, without a promise and an await each:
    // those were most of a fetch's reading in the engine (docs/PERFORMANCE.md, sixteenth round).
    whole_(resolve, reject) {
      if (this.bodyUsed) return reject(new TypeError('the body of this response was read already'));
      this.bodyUsed = true;
      if (this._body.locked) return reject(new TypeError('the body is already being read'));
      this._body.locked = true;
      const source = this._body._source;
      const pieces = [];
      let size = 0;
      let given = null;      // what the source gave and was not taken yet
      let taking = false;    // in take(): a piece given meanwhile waits for its loop
      const take = () => {
        taking = true;
        try {
          while (given !== null) {
            const { value, done } = given;
            given = null;
            if (done) return resolve(pieces);
            size += sizeOf(value);
            if (size > kNetBytes) {
              source.cancel();
              return reject(new TypeError(
                  `the answer of ${new URL(this.url).hostname} is larger than ` +
                  `${bytesText(kNetBytes)}, the most this plugin may receive (limits.netBytes)`));
            }
            pieces.push(value);
            source.next(waiter);
          }
        } catch (e) {
          reject(e);
        } finally {
          taking = false;
        }
      };
      const waiter = {
        raw: true,
        reject,
        resolve: (r) => { given = r; if (!taking) take(); },
      };
      source.next(waiter);
    }
    pieces_() { return new Promise((resolve, reject) => this.whole_(resolve, reject)); }
    async bytes() { return bytesOfPieces(await this.pieces_()); }
    // The text, made as the body's end is read: the bundle's await is the only one.
    text() {
      return new Promise((resolve, reject) => this.whole_((pieces) => {
        try {
          resolve(textOfPieces(pieces));
        } catch (e) {
          reject(e);
        }
      }, reject));
    }
    async json() { return parse(await this.text()); }
    clone() { throw new TypeError('Response.clone is not in the sandbox: read the body once'); }
    static json(data, init) {
      const r = new Response(stringify(data), init);
      if (!r.headers.has('content-type')) r.headers.set('content-type', 'application/json');
      return r;
    }
    static error() { const r = new Response(null, { status: 0 }); r.type = 'error'; return r; }
  }
  const streamEnded = (id) => {
    if (!streams.delete(id)) return;
    openStreams--;
    if (streamQueue.length && openStreams < kStreamsAtOnce) streamQueue.shift()();
    updateInput();
  };

  const fetch = (input, init) => new Promise((resolve, reject) => {
    const req = new Request(input, init);
    const signal = req.signal;
    if (signal && signal.aborted) { reject(signal.reason); return; }
    const params = { url: req.url, method: req.method, headers: {} };
    const headers = req.headers[mapOf];
    if (headers.size > 0)
      for (const k of [...headers.keys()].sort()) params.headers[k] = headers.get(k);
    if (typeof req._body === 'string') params.body = req._body;
    else if (req._body !== null) params.bodyBase64 = toBase64(req._body);
    if ((headers.get('accept') || '').includes('text/event-stream')) params.sse = true;
    let source = null, settled = false;
    const onAbort = () => {
      // Still waiting for a stream of its own: it gives up its place.
      const waiting = streamQueue.indexOf(open);
      if (waiting >= 0) streamQueue.splice(waiting, 1);
      if (source !== null) {
        if (source.id !== undefined && streams.has(source.id)) {
          tellNet('net/cancel', { stream: source.id });
          streamEnded(source.id);
        }
        source.end(signal.reason);
      }
      if (!settled) { settled = true; reject(signal.reason); }
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    const open = () => {
      if (signal && signal.aborted) return;
      openStreams++;
      // The answer is taken as its line is read, without a promise of its own between: its
      // stream is known before the next line, and the fetch resolves in the same turn.
      askNetThen('net/stream', params, (result) => {
        source = new Source(result.stream);
        streams.set(result.stream, source);
        updateInput();
        if (signal && signal.aborted) return onAbort();
        const response = new Response(null, { status: result.status, headers: result.headers,
                                               [sourceOf]: source });
        response.url = req.url;
        settled = true;
        resolve(response);
      }, (e) => {
        openStreams--;
        if (streamQueue.length && openStreams < kStreamsAtOnce) streamQueue.shift()();
        if (!settled) { settled = true; reject(netError(e)); }
      });
    };
    // Past 8 streams open, a fetch waits for one to end: the host never refuses the prelude.
    if (openStreams < kStreamsAtOnce) open(); else streamQueue.push(open);
  });

  class WebSocket extends Target {
    constructor(url, protocols, options) {
      super();
      const href = new URL(String(url)).href;
      if (!href.startsWith('wss:'))
        throw new DOMExceptionOf(`${href}: only wss is sent for a WebSocket`, 'SyntaxError');
      this.url = href;
      this.readyState = WebSocket.CONNECTING;
      this.bufferedAmount = 0;
      this.binaryType = 'arraybuffer';
      this.protocol = '';
      this.extensions = '';
      this.onopen = this.onmessage = this.onerror = this.onclose = null;
      const headers = new Headers(options && options.headers);
      const asked = protocols === undefined ? [] : [].concat(protocols).map(String);
      if (asked.length) headers.set('sec-websocket-protocol', asked.join(', '));
      const plain = {};
      for (const [k, v] of headers) plain[k] = v;
      Object.defineProperty(this, '_socket', { value: { id: undefined }, writable: false });
      askNet('ws/open', { url: href, headers: plain }).then((result) => {
        this._socket.id = result.socket;
        sockets.set(result.socket, this);
        updateInput();
        if (this.readyState === WebSocket.CLOSING) {
          askNet('ws/close', { socket: result.socket }).catch(() => {});
          return;
        }
        this.readyState = WebSocket.OPEN;
        this.dispatchEvent(event('open'));
      }, (e) => {
        this.readyState = WebSocket.CLOSED;
        this.dispatchEvent(event('error', { message: e && e.message }));
        this.dispatchEvent(event('close', { code: 1006, reason: '', wasClean: false }));
      });
    }
    send(data) {
      if (this.readyState === WebSocket.CONNECTING)
        throw new DOMExceptionOf('the WebSocket is not open yet', 'InvalidStateError');
      if (this.readyState !== WebSocket.OPEN) return;
      const params = { socket: this._socket.id };
      let size;
      if (typeof data === 'string') { params.text = data; size = utf8Length(data); }
      else {
        const bytes = bodyOf(data, new Headers());
        params.dataBase64 = toBase64(bytes);
        size = bytes.length;
      }
      this.bufferedAmount += size;
      askNet('ws/send', params).then(() => { this.bufferedAmount -= size; }, (e) => {
        this.bufferedAmount -= size;
        this.dispatchEvent(event('error', { message: e && e.message }));
      });
    }
    close(code, reason) {
      if (this.readyState === WebSocket.CLOSING || this.readyState === WebSocket.CLOSED) return;
      const opened = this.readyState === WebSocket.OPEN;
      this.readyState = WebSocket.CLOSING;
      void code; void reason;  // the host closes with 1000
      if (opened) askNet('ws/close', { socket: this._socket.id }).catch(() => {});
    }
    static get CONNECTING() { return 0; }
    static get OPEN() { return 1; }
    static get CLOSING() { return 2; }
    static get CLOSED() { return 3; }
  }

  // A net/chunk the helper read itself (js_instance.cpp, feed.chunk): its stream, its bytes, and
  // whether they came as text. False when the stream is not the prelude's: the line then goes
  // the common way below, and to the bundle.
  const netChunk = (stream, bytes, text) => {
    const source = streams.get(stream);
    if (source === undefined) return false;
    source.put(text ? new Text(bytes) : bytes);
    return true;
  };

  keepers.push(() => netAsked.size > 0 || streams.size > 0 || sockets.size > 0 ||
                     streamQueue.length > 0);
  ownInputs.push((line) => {
    if (!line.includes(netPrefix) && !line.includes('"net/') && !line.includes('"ws/'))
      return false;
    let m;
    try { m = parse(line); } catch (e) { return false; }
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
    const p = m.params !== null && typeof m.params === 'object' ? m.params : {};
    switch (m.method) {
      case 'net/chunk': {
        const source = streams.get(p.stream);
        if (source === undefined) return false;
        source.put(typeof p.data === 'string' ? p.data : fromBase64(p.dataBase64));
        return true;
      }
      case 'net/end': {
        const source = streams.get(p.stream);
        if (source === undefined) return false;
        streamEnded(p.stream);
        source.end(typeof p.error === 'string' ? new TypeError(p.error) : null);
        return true;
      }
      case 'ws/message': {
        const ws = sockets.get(p.socket);
        if (ws === undefined) return false;
        const data = typeof p.text === 'string' ? p.text : fromBase64(p.dataBase64).buffer;
        ws.dispatchEvent(event('message', { data, origin: new URL(ws.url).origin }));
        return true;
      }
      case 'ws/closed': {
        const ws = sockets.get(p.socket);
        if (ws === undefined) return false;
        sockets.delete(p.socket);
        ws.readyState = WebSocket.CLOSED;
        updateInput();
        if (p.code === 1006 || p.code === 1009)
          ws.dispatchEvent(event('error', { message: p.reason }));
        ws.dispatchEvent(event('close', { code: p.code, reason: p.reason || '',
                                          wasClean: p.code !== 1006 }));
        return true;
      }
      case undefined:
        break;
      default:
        return false;
    }
    if (typeof m.id !== 'string' || !netAsked.has(m.id)) return false;
    const asked = netAsked.get(m.id);
    netAsked.delete(m.id);
    updateInput();
    if (m.error !== undefined) asked.reject(m.error); else asked.resolve(m.result);
    return true;
  });
