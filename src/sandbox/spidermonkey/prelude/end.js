
  // The prelude's end: the modules' hidden global, the globals it gives the bundle, and the
  // function the host calls with each line of input.
  Object.defineProperty(globalThis, '__escouadeModules', {
    value: Object.freeze({
      readline: Object.freeze({ createInterface }),
      fs: Object.freeze({ readFileSync }),
    }),
    configurable: true,
  });
  const globals = {
    process, console, queueMicrotask, setTimeout, clearTimeout, setInterval, clearInterval,
    TextEncoder, TextDecoder, URL, URLSearchParams,
    fetch, Headers, Request, Response, AbortController, AbortSignal, WebSocket, escouade,
  };
  if (globalThis.DOMException === undefined) globals.DOMException = DOMExceptionOf;
  for (const [name, value] of Object.entries(globals))
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  globalThis._importMeta_ = { url: host.url };

  // `mayBeOwn` false: the helper found none of the marks the prelude's own lines carry in it
  // (sandbox/prelude_marks.hpp), and its filters need not look.
  const feed = (line, mayBeOwn) => {
    if (line === null) {
      if (inputEnded) return;
      inputEnded = true;
      stdin.readable = false;
      stdin.emit('end');
      stdin.emit('close');
      updateInput();
      return;
    }
    if (mayBeOwn !== false && ownInput(line)) return;
    stdin.emit('data', line);
  };
  // The pieces of the prelude's streams, which the helper reads without a string of their line.
  feed.chunk = netChunk;
  return feed;
})