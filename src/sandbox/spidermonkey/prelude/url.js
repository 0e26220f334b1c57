
  // URL and URLSearchParams, after the WHATWG URL standard as far as file:, http(s):, ws(s): and
  // ftp: URLs go (docs/sandbox.md says what is left out): a base resolves a relative input, the
  // path's "." and ".." segments are resolved, what the standard encodes in a path, a query or a
  // fragment is percent-encoded (UTF-8), the host is lowercased and a scheme's default port
  // dropped. Uses encodeUtf8 and decodeUtf8 (text.js, before it).
  const kDefaultPorts = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21',
                          'file:': '' };
  const isSpecial = (protocol) => Object.prototype.hasOwnProperty.call(kDefaultPorts, protocol);
  const invalidUrl = (input, why) => {
    const e = new TypeError(`Invalid URL: ${input}${why ? ` (${why})` : ''}`);
    e.code = 'ERR_INVALID_URL';
    e.input = input;
    return e;
  };
  const hex = (b) => '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
  // Percent-encodes what `set` names and every byte past ASCII; a '%' already there stays.
  const encodeSet = (s, set) => {
    let out = '';
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (c > 0x20 && c < 0x7f && !set.includes(ch)) out += ch;
      else for (const b of encodeUtf8(ch)) out += hex(b);
    }
    return out;
  };
  const kFragmentSet = ' "<>`';
  const kQuerySet = ' "#<>';
  const kSpecialQuerySet = ' "#<>\'';
  const kPathSet = ' "#<>?`{}';
  const kUserinfoSet = ' "#<>?`{}/:;=@[\\]^|';
  const kForbiddenHost = ' #%/:<>?@[\\]^|';

  const isDot = (seg) => seg === '.' || seg.toLowerCase() === '%2e';
  const isDotDot = (seg) => ['..', '.%2e', '%2e.', '%2e%2e'].includes(seg.toLowerCase());
  // A path of segments, "." and ".." resolved: never above its root.
  const resolvePath = (segments) => {
    const out = [];
    segments.forEach((seg, i) => {
      const last = i === segments.length - 1;
      if (isDotDot(seg)) {
        out.pop();
        if (last) out.push('');
      } else if (isDot(seg)) {
        if (last) out.push('');
      } else {
        out.push(seg);
      }
    });
    return out;
  };

  // The standard's IPv4 number: decimal, 0x hex or 0 octal; an empty hex part is 0. NaN when
  // it is none.
  const ipv4Number = (part) => {
    if (part === '') return NaN;
    let radix = 10;
    if (/^0[xX]/.test(part)) { part = part.slice(2); radix = 16; }
    else if (part.length > 1 && part[0] === '0') { part = part.slice(1); radix = 8; }
    if (part === '') return 0;
    const digits = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
    return digits.test(part) ? parseInt(part, radix) : NaN;
  };
  // Whether a host is to be read as an IPv4 address: its last label (a trailing dot aside) is
  // a number in any of those spellings.
  const endsInANumber = (host) => {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    const last = parts[parts.length - 1];
    return last !== '' && (/^[0-9]+$/.test(last) || !Number.isNaN(ipv4Number(last)));
  };
  // The standard's IPv4 parser: up to four parts, the last one taking the bytes the others did
  // not ("127.1" is 127.0.0.1, "2130706433" too); anything else is no URL.
  const parseIpv4 = (host, input) => {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    if (parts.length > 4) throw invalidUrl(input, 'an IPv4 address of more than four parts');
    const numbers = parts.map(ipv4Number);
    if (numbers.some(Number.isNaN)) throw invalidUrl(input, 'an IPv4 address that does not read');
    const last = numbers.pop();
    if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length))
      throw invalidUrl(input, 'an IPv4 address out of range');
    let address = last;
    numbers.forEach((n, i) => { address += n * 256 ** (3 - i); });
    return [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join('.');
  };
  // The standard's IPv6 parser and serializer: eight pieces, "::" once, an IPv4 address at the
  // end; written back in lower case, without leading zeros, the longest run of two zero pieces
  // or more as "::".
  const parseIpv6 = (text, input) => {
    const bad = () => invalidUrl(input, 'an IPv6 address that does not read');
    const pieces = [0, 0, 0, 0, 0, 0, 0, 0];
    let at = 0, compress = null, i = 0;
    if (text[0] === ':') {
      if (text[1] !== ':') throw bad();
      i = 2; at = 1; compress = 1;
    }
    while (i < text.length) {
      if (at === 8) throw bad();
      if (text[i] === ':') {
        if (compress !== null) throw bad();
        i++; at++; compress = at;
        continue;
      }
      let value = 0, length = 0;
      while (length < 4 && i < text.length && /[0-9a-fA-F]/.test(text[i])) {
        value = value * 16 + parseInt(text[i], 16); i++; length++;
      }
      if (text[i] === '.') {
        if (length === 0 || at > 6) throw bad();
        i -= length;
        const v4 = text.slice(i).split('.');
        if (v4.length !== 4 || v4.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255))
          throw bad();
        pieces[at] = Number(v4[0]) * 256 + Number(v4[1]);
        pieces[at + 1] = Number(v4[2]) * 256 + Number(v4[3]);
        at += 2; i = text.length;
        break;
      }
      if (text[i] === ':') { i++; if (i === text.length) throw bad(); }
      else if (i < text.length) throw bad();
      pieces[at++] = value;
    }
    if (compress !== null) {
      let swaps = at - compress;
      at = 7;
      while (at !== 0 && swaps > 0) {
        const from = compress + swaps - 1;
        [pieces[at], pieces[from]] = [pieces[from], pieces[at]];
        at--; swaps--;
      }
    } else if (at !== 8) {
      throw bad();
    }
    let best = -1, bestLength = 1;
    for (let j = 0; j < 8;) {
      if (pieces[j] !== 0) { j++; continue; }
      let k = j;
      while (k < 8 && pieces[k] === 0) k++;
      if (k - j > bestLength) { best = j; bestLength = k - j; }
      j = k;
    }
    let out = '';
    for (let j = 0; j < 8; j++) {
      if (j === best) { out += j === 0 ? '::' : ':'; j += bestLength - 1; continue; }
      out += pieces[j].toString(16) + (j < 7 ? ':' : '');
    }
    return `[${out}]`;
  };

  const parseHost = (text, special, input) => {
    if (text.startsWith('[')) {
      if (!text.endsWith(']')) throw invalidUrl(input, 'an IPv6 address without its "]"');
      return parseIpv6(text.slice(1, -1), input);
    }
    if (!special) return encodeSet(text, ' "#<>`{}');
    let host;
    try { host = decodeURIComponent(text); } catch (e) { throw invalidUrl(input, 'its host'); }
    host = host.toLowerCase();
    for (const ch of host) {
      if (ch.codePointAt(0) > 0x7e)
        throw invalidUrl(input, 'a host name past ASCII, which the sandbox does not convert');
      if (ch.codePointAt(0) <= 0x20 || kForbiddenHost.includes(ch))
        throw invalidUrl(input, 'a character a host may not hold');
    }
    return endsInANumber(host) ? parseIpv4(host, input) : host;
  };

  // The parts of an absolute URL: {protocol, username, password, hostname, port, path: [] or
  // an opaque string, query: string or null, fragment: string or null, hasHost}.
  const parseUrl = (input, base) => {
    let s = String(input).replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
    s = s.replace(/[\t\n\r]/g, '');
    const u = { protocol: '', username: '', password: '', hostname: '', port: '', path: [],
                query: null, fragment: null, hasHost: false };
    const hashAt = s.indexOf('#');
    if (hashAt >= 0) {
      u.fragment = encodeSet(s.slice(hashAt + 1), kFragmentSet);
      s = s.slice(0, hashAt);
    }
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(s);
    let rest;
    if (scheme) {
      u.protocol = scheme[1].toLowerCase() + ':';
      rest = s.slice(scheme[0].length);
      // "http:foo" against an http: base is relative to it, as the standard says.
      if (base && isSpecial(u.protocol) && base.protocol === u.protocol && !/^[/\\]/.test(rest))
        return relative(rest, base, u, input);
    } else {
      if (!base) throw invalidUrl(input, 'a relative URL without a base');
      if (typeof base.path === 'string') {
        if (s === '' && u.fragment !== null) return { ...base, fragment: u.fragment };
        throw invalidUrl(input, 'a relative URL against a base that has no path to resolve in');
      }
      u.protocol = base.protocol;
      return relative(s, base, u, input);
    }
    const special = isSpecial(u.protocol);
    if (special) rest = rest.replace(/\\/g, '/');
    const queryAt = rest.indexOf('?');
    if (queryAt >= 0) {
      u.query = rest.slice(queryAt + 1);
      rest = rest.slice(0, queryAt);
    }
    if (special && u.protocol !== 'file:') {
      rest = authority(rest.replace(/^\/*/, ''), u, special, input);  // any slashes, or none
    } else if (rest.startsWith('//')) {
      rest = authority(rest.slice(2), u, special, input);
      if (!special && rest === '') {
        finishQuery(u, special);
        return u;
      }
    } else if (u.protocol === 'file:') {
      u.hasHost = true;  // file:/x and file:x have the empty host
    } else if (!rest.startsWith('/')) {
      // An opaque path (mailto:, data:, urn:): as written, its controls and non-ASCII encoded.
      u.path = rest.replace(/[\u0000-\u001f\u007f-\u{10ffff}]/gu, (ch) => encodeSet(ch, ''));
      finishQuery(u, special);
      return u;
    }
    u.path = resolvePath(splitPath(rest));
    finishQuery(u, special);
    return u;
  };
  const splitPath = (rest) => {
    const p = rest.startsWith('/') ? rest.slice(1) : rest;
    return p.split('/').map((seg) => encodeSet(seg, kPathSet));
  };
  const finishQuery = (u, special) => {
    if (u.query !== null) u.query = encodeSet(u.query, special ? kSpecialQuerySet : kQuerySet);
  };
  // The authority of `rest` (what follows "//"), into u; returns what follows it.
  const authority = (rest, u, special, input) => {
    const end = rest.search(/[/?#]/);
    const auth = end < 0 ? rest : rest.slice(0, end);
    rest = end < 0 ? '' : rest.slice(end);
    u.hasHost = true;
    let hostPort = auth;
    const at = auth.lastIndexOf('@');
    if (at >= 0) {
      const info = auth.slice(0, at);
      hostPort = auth.slice(at + 1);
      const colon = info.indexOf(':');
      u.username = encodeSet(colon < 0 ? info : info.slice(0, colon), kUserinfoSet);
      u.password = colon < 0 ? '' : encodeSet(info.slice(colon + 1), kUserinfoSet);
    }
    const portAt = hostPort.lastIndexOf(':');
    let hostText = hostPort;
    if (portAt >= 0 && !hostPort.slice(portAt).includes(']')) {
      hostText = hostPort.slice(0, portAt);
      const port = hostPort.slice(portAt + 1);
      if (!/^[0-9]*$/.test(port) || (port !== '' && Number(port) > 65535))
        throw invalidUrl(input, 'its port');
      u.port = port === '' ? '' : String(Number(port));
      if (special && kDefaultPorts[u.protocol] === u.port) u.port = '';
    }
    u.hostname = parseHost(hostText, special, input);
    if (u.protocol === 'file:') {
      if (u.port !== '' || u.username !== '' || u.password !== '')
        throw invalidUrl(input, 'a file: URL has no port nor user');
      if (u.hostname === 'localhost') u.hostname = '';
    } else if (special && u.hostname === '') {
      throw invalidUrl(input, 'no host');
    }
    return rest;
  };
  // `s` (scheme, fragment and nothing else taken off) against `base`, into u.
  const relative = (s, base, u, input) => {
    const special = isSpecial(u.protocol);
    if (special) s = s.replace(/\\/g, '/');
    if (s.startsWith('//')) {
      const queryAt = s.indexOf('?');
      if (queryAt >= 0) {
        u.query = s.slice(queryAt + 1);
        s = s.slice(0, queryAt);
      }
      const rest = authority(s.slice(2), u, special, input);
      u.path = resolvePath(splitPath(rest));
      finishQuery(u, special);
      return u;
    }
    Object.assign(u, { username: base.username, password: base.password,
                       hostname: base.hostname, port: base.port, hasHost: base.hasHost });
    const queryAt = s.indexOf('?');
    const pathText = queryAt >= 0 ? s.slice(0, queryAt) : s;
    if (queryAt >= 0) u.query = s.slice(queryAt + 1);
    if (pathText === '') {
      u.path = base.path.slice();
      if (queryAt < 0) u.query = base.query;
      else finishQuery(u, special);
      return u;
    }
    if (pathText.startsWith('/')) {
      u.path = resolvePath(splitPath(pathText));
    } else {
      const dir = base.path.slice(0, -1);
      u.path = resolvePath(dir.concat(splitPath(pathText)));
    }
    finishQuery(u, special);
    return u;
  };

  const pathnameOf = (u) =>
    typeof u.path === 'string' ? u.path : u.path.length ? '/' + u.path.join('/') : '';
  const hrefOf = (u) => {
    let out = u.protocol;
    if (u.hasHost) {
      out += '//';
      if (u.username !== '' || u.password !== '')
        out += u.username + (u.password !== '' ? ':' + u.password : '') + '@';
      out += u.hostname + (u.port !== '' ? ':' + u.port : '');
    }
    out += pathnameOf(u);
    if (u.query !== null) out += '?' + u.query;
    if (u.fragment !== null) out += '#' + u.fragment;
    return out;
  };

  // application/x-www-form-urlencoded, as URLSearchParams reads and writes it.
  const formDecode = (s) => {
    const t = s.replace(/\+/g, ' ');
    if (!t.includes('%')) return t;
    const bytes = [];
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c === 0x25 && /^[0-9A-Fa-f]{2}$/.test(t.slice(i + 1, i + 3))) {
        bytes.push(parseInt(t.slice(i + 1, i + 3), 16));
        i += 2;
      } else {
        for (const b of encodeUtf8(t[i])) bytes.push(b);
      }
    }
    return decodeUtf8(new Uint8Array(bytes));
  };
  const formEncode = (s) => {
    let out = '';
    for (const b of encodeUtf8(s)) {
      const ch = String.fromCharCode(b);
      if (/[A-Za-z0-9*\-._]/.test(ch)) out += ch;
      else if (b === 0x20) out += '+';
      else out += hex(b);
    }
    return out;
  };
  const parsePairs = (query) => {
    const pairs = [];
    for (const part of query.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      pairs.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)),
                                                    formDecode(part.slice(eq + 1))]);
    }
    return pairs;
  };

  class URLSearchParams {
    constructor(init = '') {
      let pairs = [];
      if (typeof init === 'string') {
        pairs = parsePairs(init.startsWith('?') ? init.slice(1) : init);
      } else if (init instanceof URLSearchParams) {
        pairs = init._pairs.map((p) => p.slice());
      } else if (init !== null && typeof init === 'object') {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const p of init) {
            const pair = [...p];
            if (pair.length !== 2) throw new TypeError('each pair of URLSearchParams has 2 items');
            pairs.push([String(pair[0]), String(pair[1])]);
          }
        } else {
          for (const k of Object.keys(init)) pairs.push([k, String(init[k])]);
        }
      } else if (init !== undefined) {
        pairs = parsePairs(String(init));
      }
      Object.defineProperty(this, '_pairs', { value: pairs, writable: true });
      Object.defineProperty(this, '_changed', { value: null, writable: true });
    }
    get size() { return this._pairs.length; }
    get(name) {
      const p = this._pairs.find((q) => q[0] === String(name));
      return p ? p[1] : null;
    }
    getAll(name) { return this._pairs.filter((q) => q[0] === String(name)).map((q) => q[1]); }
    has(name, value) {
      return this._pairs.some((q) => q[0] === String(name) &&
                              (value === undefined || q[1] === String(value)));
    }
    append(name, value) { this._pairs.push([String(name), String(value)]); this._update(); }
    set(name, value) {
      const n = String(name);
      const i = this._pairs.findIndex((q) => q[0] === n);
      if (i < 0) this._pairs.push([n, String(value)]);
      else {
        this._pairs[i][1] = String(value);
        this._pairs = this._pairs.filter((q, j) => j <= i || q[0] !== n);
      }
      this._update();
    }
    delete(name, value) {
      this._pairs = this._pairs.filter((q) => !(q[0] === String(name) &&
                                              (value === undefined || q[1] === String(value))));
      this._update();
    }
    sort() {
      this._pairs = this._pairs.map((p, i) => [p, i]).sort((a, b) =>
        a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]).map((x) => x[0]);
      this._update();
    }
    forEach(f, self) { for (const [k, v] of this._pairs) f.call(self, v, k, this); }
    *entries() { for (const p of this._pairs) yield [p[0], p[1]]; }
    *keys() { for (const p of this._pairs) yield p[0]; }
    *values() { for (const p of this._pairs) yield p[1]; }
    [Symbol.iterator]() { return this.entries(); }
    toString() {
      return this._pairs.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&');
    }
    _update() { if (this._changed) this._changed(); }
  }
  for (const name of ['_update'])
    Object.defineProperty(URLSearchParams.prototype, name, { enumerable: false });

  class URL {
    constructor(input, base) {
      const b = base === undefined ? undefined : parseUrl(String(base), undefined);
      const u = parseUrl(String(input), b);
      Object.defineProperty(this, '_url', { value: u, writable: true });
      Object.defineProperty(this, '_params', { value: null, writable: true });
    }
    static canParse(input, base) {
      try { new URL(input, base); return true; } catch (e) { return false; }
    }
    get href() { return hrefOf(this._url); }
    set href(value) {
      this._url = parseUrl(String(value), undefined);
      if (this._params) this._params._pairs = parsePairs(this._url.query || '');
    }
    // The setters do what the standard's do for the URLs this parser reads: a value they cannot
    // take leaves the URL as it was, without an error.
    get protocol() { return this._url.protocol; }
    set protocol(value) {
      const m = /^([A-Za-z][A-Za-z0-9+.-]*)(:|$)/.exec(String(value));
      if (!m) return;
      const u = this._url;
      const protocol = m[1].toLowerCase() + ':';
      // Special and not special do not trade places, nor does file: with a port or a user.
      if (isSpecial(protocol) !== isSpecial(u.protocol)) return;
      if (protocol === 'file:' && (u.port !== '' || u.username !== '' || u.password !== ''))
        return;
      if (u.protocol === 'file:' && u.hostname === '' && protocol !== 'file:') return;
      u.protocol = protocol;
      if (kDefaultPorts[protocol] === u.port) u.port = '';
    }
    get username() { return this._url.username; }
    set username(value) {
      if (this._noCredentials()) return;
      this._url.username = encodeSet(String(value), kUserinfoSet);
    }
    get password() { return this._url.password; }
    set password(value) {
      if (this._noCredentials()) return;
      this._url.password = encodeSet(String(value), kUserinfoSet);
    }
    get host() { return this._url.hostname + (this._url.port !== '' ? ':' + this._url.port : ''); }
    set host(value) { this._setHost(String(value), true); }
    get hostname() { return this._url.hostname; }
    set hostname(value) { this._setHost(String(value), false); }
    get port() { return this._url.port; }
    set port(value) {
      const u = this._url;
      if (!u.hasHost || u.hostname === '' || u.protocol === 'file:') return;
      const s = String(value).replace(/[\t\n\r]/g, '');
      if (s === '') {
        u.port = '';
        return;
      }
      const digits = /^[0-9]+/.exec(s);
      if (!digits || Number(digits[0]) > 65535) return;
      u.port = String(Number(digits[0]));
      if (isSpecial(u.protocol) && kDefaultPorts[u.protocol] === u.port) u.port = '';
    }
    get pathname() { return pathnameOf(this._url); }
    set pathname(value) {
      const u = this._url;
      if (typeof u.path === 'string') return;  // an opaque path is not set
      let s = String(value).replace(/[\t\n\r]/g, '');
      if (isSpecial(u.protocol)) s = s.replace(/\\/g, '/');
      u.path = resolvePath(splitPath(s));
    }
    get search() { return this._url.query ? '?' + this._url.query : ''; }
    set search(value) {
      const s = String(value);
      const q = s.startsWith('?') ? s.slice(1) : s;
      this._url.query = s === '' ? null : encodeSet(q, isSpecial(this._url.protocol)
                                                        ? kSpecialQuerySet : kQuerySet);
      if (this._params) this._params._pairs = parsePairs(q);
    }
    get hash() { return this._url.fragment ? '#' + this._url.fragment : ''; }
    set hash(value) {
      const s = String(value);
      this._url.fragment = s === '' ? null : encodeSet(s.startsWith('#') ? s.slice(1) : s,
                                                       kFragmentSet);
    }
    get origin() {
      const u = this._url;
      if (!isSpecial(u.protocol) || u.protocol === 'file:') return 'null';
      return u.protocol + '//' + this.host;
    }
    get searchParams() {
      if (!this._params) {
        const params = new URLSearchParams(this._url.query || '');
        params._changed = () => {
          const q = params.toString();
          this._url.query = q === '' ? null : q;
        };
        this._params = params;
      }
      return this._params;
    }
    toString() { return this.href; }
    toJSON() { return this.href; }
    _noCredentials() {
      const u = this._url;
      return !u.hasHost || u.hostname === '' || u.protocol === 'file:';
    }
    // host (with its port, when `withPort`) or hostname: what comes before '/', '?' or '#'.
    _setHost(value, withPort) {
      const u = this._url;
      if (typeof u.path === 'string') return;
      const special = isSpecial(u.protocol);
      let text = value.replace(/[\t\n\r]/g, '');
      if (special) text = text.replace(/\\/g, '/');
      text = text.split(/[/?#]/)[0];
      let port = null;
      const colon = text.startsWith('[') ? text.indexOf(':', text.indexOf(']')) : text.indexOf(':');
      if (colon >= 0) {
        if (!withPort) return;  // hostname takes no port: the URL stays as it was
        const digits = /^[0-9]*/.exec(text.slice(colon + 1))[0];
        if (digits !== '' && Number(digits) <= 65535) port = String(Number(digits));
        text = text.slice(0, colon);
        if (text === '') return;
      }
      if (text === '' && special && u.protocol !== 'file:') return;
      let hostname;
      try { hostname = parseHost(text, special, value); } catch (e) { return; }
      if (u.protocol === 'file:' && hostname === 'localhost') hostname = '';
      u.hostname = hostname;
      u.hasHost = true;
      if (port !== null) u.port = special && kDefaultPorts[u.protocol] === port ? '' : port;
    }
  }
  for (const name of ['_noCredentials', '_setHost'])
    Object.defineProperty(URL.prototype, name, { enumerable: false });
