
  // TextEncoder and TextDecoder, UTF-8 only, after the WHATWG Encoding standard: the encoder
  // turns a lone surrogate into U+FFFD; the decoder follows the standard's UTF-8 decoder byte by
  // byte, so an invalid sequence becomes one U+FFFD per maximal subpart (or a TypeError when
  // fatal), a leading BOM is dropped unless ignoreBOM, and {stream: true} keeps a sequence cut
  // between two calls. Defines encodeUtf8 and decodeUtf8 for the parts after it.
  const kReplacement = 0xfffd;
  // The bytes of a string, UTF-8; `put(byte)` returns false once there is no room.
  const eachUtf8 = (s, put) => {
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      let units = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          units = 2;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = kReplacement;  // a lone surrogate
      const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (!put(c, n, units)) return;
      i += units - 1;
    }
  };
  const writeUtf8 = (c, n, out, at) => {
    if (n === 1) { out[at] = c; return; }
    const lead = n === 2 ? 0xc0 : n === 3 ? 0xe0 : 0xf0;
    out[at] = lead | (c >> (6 * (n - 1)));
    for (let k = 1; k < n; k++) out[at + k] = 0x80 | ((c >> (6 * (n - 1 - k))) & 0x3f);
  };

  const utf8Native = host.utf8, utf8Length = host.utf8Length;
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    // The engine's own encoder (host.utf8): lone surrogates as U+FFFD, as here.
    encode(input = '') { return utf8Native(String(input)); }
    encodeInto(input, dest) {
      if (!(dest instanceof Uint8Array)) throw new TypeError('encodeInto writes into a Uint8Array');
      let read = 0, written = 0;
      eachUtf8(String(input), (c, n, units) => {
        if (written + n > dest.length) return false;
        writeUtf8(c, n, dest, written);
        written += n;
        read += units;
        return true;
      });
      return { read, written };
    }
  }

  const utf8Encoder = new TextEncoder();
  const encodeUtf8 = (s) => utf8Encoder.encode(s);
  const kUtf8Labels = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8',
                       'x-unicode20utf8'];
  const bytesOf = (input) => {
    if (input === undefined) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input))
      return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError('decode takes an ArrayBuffer, a typed array or a DataView');
  };

  class TextDecoder {
    constructor(label = 'utf-8', options = {}) {
      const name = String(label).trim().toLowerCase();
      if (!kUtf8Labels.includes(name)) {
        const e = new RangeError(`the encoding "${label}" is not supported: ` +
                                 'only utf-8 in the sandbox');
        e.code = 'ERR_ENCODING_NOT_SUPPORTED';  // Node's
        throw e;
      }
      const o = options === undefined || options === null ? {} : options;
      Object.defineProperty(this, '_state', {
        value: { fatal: Boolean(o.fatal), ignoreBOM: Boolean(o.ignoreBOM), code: 0, needed: 0,
                 seen: 0, lower: 0x80, upper: 0xbf, bomSeen: false },
      });
    }
    get encoding() { return 'utf-8'; }
    get fatal() { return this._state.fatal; }
    get ignoreBOM() { return this._state.ignoreBOM; }
    decode(input, options = {}) {
      const st = this._state;
      const bytes = bytesOf(input);
      const stream = Boolean(options && options.stream);
      const units = [];
      let out = '';
      const flush = () => { out += String.fromCharCode.apply(null, units); units.length = 0; };
      const restart = () => {
        st.code = 0; st.needed = 0; st.seen = 0; st.lower = 0x80; st.upper = 0xbf;
      };
      // An invalid sequence: U+FFFD, or the end of a fatal decoder's call.
      const invalid = () => {
        restart();
        if (st.fatal) {
          st.bomSeen = false;
          const e = new TypeError('the bytes are not valid UTF-8');
          e.code = 'ERR_ENCODING_INVALID_ENCODED_DATA';  // Node's
          throw e;
        }
        emit(kReplacement);
      };
      const emit = (c) => {
        if (!st.bomSeen) {
          st.bomSeen = true;
          if (c === 0xfeff && !st.ignoreBOM) return;
        }
        if (c < 0x10000) units.push(c);
        else units.push(0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
        if (units.length > 8192) flush();
      };
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i];
        if (st.needed === 0) {
          if (b <= 0x7f) emit(b);
          else if (b >= 0xc2 && b <= 0xdf) { st.needed = 1; st.code = b & 0x1f; }
          else if (b >= 0xe0 && b <= 0xef) {
            if (b === 0xe0) st.lower = 0xa0;
            if (b === 0xed) st.upper = 0x9f;
            st.needed = 2; st.code = b & 0xf;
          } else if (b >= 0xf0 && b <= 0xf4) {
            if (b === 0xf0) st.lower = 0x90;
            if (b === 0xf4) st.upper = 0x8f;
            st.needed = 3; st.code = b & 0x7;
          } else invalid();
          continue;
        }
        if (b < st.lower || b > st.upper) {
          // The sequence so far is one error; this byte starts over.
          invalid();
          i--;
          continue;
        }
        st.lower = 0x80; st.upper = 0xbf;
        st.code = (st.code << 6) | (b & 0x3f);
        if (++st.seen === st.needed) {
          const c = st.code;
          st.code = 0; st.needed = 0; st.seen = 0;
          emit(c);
        }
      }
      if (!stream) {
        if (st.needed !== 0) invalid();
        st.bomSeen = false;  // the next call is a new stream
      }
      flush();
      return out;
    }
  }
  const decodeUtf8 = (bytes) => new TextDecoder().decode(bytes);
