
  // setTimeout, clearTimeout, setInterval and clearInterval over timer/set, timer/cancel and
  // timer/fired (docs/sandbox.md, "Timers"); adds to ownInputs and keepers. The host keeps the
  // timers (services/timers.hpp: 10 ms at least, 64 at once, gone with the instance); the prelude
  // asks for them with requests of its own and hands the bundle's callbacks their turns when
  // timer/fired comes. Its requests' ids are strings with a prefix made at random when the
  // instance starts; an answer is the prelude's only when its id is one of the prelude's requests
  // still unanswered, a timer/fired only when it names a timer the prelude set. Anything else,
  // however much it looks like the prelude's, is the bundle's.
  // The host's numbers (protocol/limits.hpp), not written again here.
  const kTimersAtOnce = host.limits.timersAtOnce;
  const kTimerMaxMs = host.limits.timerMaxMs;
  const ownPrefix = 'escouade-prelude:' + Math.random().toString(36).slice(2, 10) +
                    Math.random().toString(36).slice(2, 10) + ':';
  let ownCount = 0, timerCount = 0;
  const timers = new Map();  // the bundle's id -> its timer, until it fired or the host forgot it
  const byHost = new Map();  // the host's timer -> the bundle's id
  const asked = new Map();   // the prelude's timer/set not answered yet -> the bundle's id
  // Two counts. `live`: the bundle's timers neither fired nor cleared, which setTimeout bounds.
  // `held`: those the host holds or will once it reads timer/set, which timer/set bounds; a
  // timer cleared before its timer/set was answered is held until the answer lets the prelude
  // take it back. A timer started while the host holds 64 waits in `waiting` and is asked for
  // once one of them is taken back or fires, so the host never refuses the prelude.
  let live = 0, held = 0;
  const waiting = [];
  // The host's timers taken back lately: a timer/fired already on its way when timer/cancel left
  // is dropped. Bounded: such a timer/fired comes within a few lines of its cancel.
  const takenBack = new Set();
  const kTakenBackKept = 1024;

  keepers.push(() => {
    if (asked.size) return true;
    for (const t of timers.values()) if (t.ref && !t.cleared) return true;
    return false;
  });

  const askHost = (t) => {
    const id = ownPrefix + ++ownCount;
    asked.set(id, t.id);
    held++;
    sendOwn({ jsonrpc: '2.0', id, method: 'timer/set', params: { ms: t.ms } });
  };
  const heldNoMore = () => {
    held--;
    while (held < kTimersAtOnce && waiting.length) askHost(waiting.shift());
  };
  const takeBack = (hostTimer) => {
    byHost.delete(hostTimer);
    takenBack.add(hostTimer);
    if (takenBack.size > kTakenBackKept) takenBack.delete(takenBack.values().next().value);
    sendOwn({ jsonrpc: '2.0', method: 'timer/cancel', params: { timer: hostTimer } });
    heldNoMore();
  };

  // What setTimeout returns, as in Node: clearTimeout takes it or its number.
  class Timeout {
    constructor(id) { Object.defineProperty(this, '_id', { value: id }); }
    ref() { return this._keep(true); }
    unref() { return this._keep(false); }
    hasRef() { const t = timers.get(this._id); return t !== undefined && t.ref; }
    _keep(ref) {
      const t = timers.get(this._id);
      if (t) { t.ref = ref; updateInput(); }
      return this;
    }
    [Symbol.toPrimitive]() { return this._id; }
  }

  const start = (f, ms, args, repeat) => {
    if (typeof f !== 'function') throw new TypeError('the callback must be a function');
    if (live >= kTimersAtOnce)
      throw new RangeError(`${kTimersAtOnce} timers are already active, the most a sandboxed ` +
                           'plugin may have at once: one must fire or be cleared first');
    // As Node does: a delay that is not a number from 1 to 2^31 - 1 is 1. The host makes less
    // than 10 ms 10.
    let delay = Number(ms);
    if (!(delay >= 1 && delay <= kTimerMaxMs)) delay = 1;
    const t = { id: ++timerCount, f, args, ms: delay, repeat, ref: true, cleared: false,
                host: undefined, handle: undefined, firing: false };
    t.handle = new Timeout(t.id);
    timers.set(t.id, t);
    live++;
    if (held < kTimersAtOnce) askHost(t); else waiting.push(t);
    updateInput();
    return t.handle;
  };
  const clear = (handle) => {
    const id = handle instanceof Timeout ? handle._id : Number(handle);
    const t = timers.get(id);
    if (t === undefined || t.cleared) return;
    t.cleared = true;
    live--;
    const w = waiting.indexOf(t);
    if (w >= 0) {
      waiting.splice(w, 1);
      timers.delete(id);
    } else if (t.host !== undefined) {
      timers.delete(id);
      takeBack(t.host);
    }
    // Else an interval in its callback (it ends after it), or a timer whose timer/set is not
    // answered yet: it is taken back once it is.
    updateInput();
  };
  const setTimeout = (f, ms, ...args) => start(f, ms, args, false);
  const setInterval = (f, ms, ...args) => start(f, ms, args, true);
  const clearTimeout = (handle) => clear(handle);
  const clearInterval = (handle) => clear(handle);

  const answered = (m) => {
    const t = timers.get(asked.get(m.id));
    asked.delete(m.id);
    if (t === undefined) return;
    const result = m.result;
    const hostTimer = result !== null && typeof result === 'object' ? result.timer : undefined;
    if (typeof hostTimer !== 'number') {
      // The prelude keeps within the host's limits, so this is not expected: it is said.
      timers.delete(t.id);
      if (!t.cleared) live--;
      heldNoMore();
      write(2, 'setTimeout: Escouade refused the timer: ' +
               (m.error && m.error.message ? m.error.message : 'its answer names no timer') +
               '\n');
    } else if (t.cleared) {
      timers.delete(t.id);
      takeBack(hostTimer);
    } else {
      t.host = hostTimer;
      byHost.set(hostTimer, t.id);
    }
    updateInput();
  };
  // A turn of its own (the line that brought timer/fired): an exception thrown by the callback
  // leaves the prelude's function and ends the instance, as one in a line handler does.
  const fired = (hostTimer) => {
    const t = timers.get(byHost.get(hostTimer));
    byHost.delete(hostTimer);
    if (t === undefined) return;
    t.host = undefined;
    if (!t.repeat) {
      timers.delete(t.id);
      live--;
      heldNoMore();
      updateInput();
      t.f.apply(t.handle, t.args);
      return;
    }
    // An interval keeps its slot through its callback, then asks again unless it was cleared.
    t.firing = true;
    t.f.apply(t.handle, t.args);
    t.firing = false;
    if (t.cleared) {
      timers.delete(t.id);
      heldNoMore();
    } else {
      held--;
      askHost(t);
    }
    updateInput();
  };

  ownInputs.push((line) => {
    if (!line.includes(ownPrefix) && !line.includes('"timer/fired"')) return false;
    let m;
    try { m = parse(line); } catch (e) { return false; }
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
    if (m.method === 'timer/fired') {
      const params = m.params;
      const hostTimer = params !== null && typeof params === 'object' ? params.timer : undefined;
      if (byHost.has(hostTimer)) { fired(hostTimer); return true; }
      if (takenBack.delete(hostTimer)) return true;
      return false;
    }
    if (m.method === undefined && typeof m.id === 'string' && asked.has(m.id)) {
      answered(m);
      return true;
    }
    return false;
  });
