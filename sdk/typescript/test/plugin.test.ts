// The SDK against an Escouade in memory: the handshake, handlers, errors the protocol asks for,
// batches, calls with their delays, the shutdown.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { allow, ask, deny, EscouadeError, Plugin, type Fact } from '@escouade-dev/plugin';
import { TestEscouade } from '@escouade-dev/plugin/testing';

const request = { id: 'r1', kind: 'command', tool: 'Bash', input: { command: 'rm -rf /' } };

describe('the handshake', () => {
  it('answers initialize with protocol 1 and batches, then runs the start handlers', async () => {
    const order: string[] = [];
    const plugin = new Plugin({ id: 'dev.example.test' }).onStart(async (p) => {
      order.push('start:' + (await p.file('rules.json')));
    });
    const e = new TestEscouade(plugin, { files: { 'rules.json': '{}' } });
    const result = await e.start();
    assert.deepEqual(result, { protocolVersion: 1, capabilities: { batch: true } });
    assert.deepEqual(order, ['start:{}']);
    // The start ran after the answer went out: the answer is the first thing written.
    assert.deepEqual((e.written[0] as { result: unknown }).result, result);
  });

  it('keeps decisions waiting until the start handlers are done', async () => {
    let rules: string | undefined;
    const plugin = new Plugin()
      .onStart(async (p) => {
        rules = await p.file('rules.json');
      })
      .onDecide(() => (rules ? deny('rules loaded') : ask('no rules yet')));
    const e = new TestEscouade(plugin, { files: { 'rules.json': 'x' } });
    const started = e.start();
    const decided = e.decide({ request });
    await started;
    assert.deepEqual(await decided, { decision: 'deny', message: 'rules loaded' });
  });

  it('refuses an initialize whose params do not hold with -32602', async () => {
    const e = new TestEscouade(new Plugin());
    await assert.rejects(e.request('initialize', { protocolVersion: 1 }), (err: EscouadeError) => {
      assert.equal(err.code, -32602);
      assert.equal(err.message, 'params.escouade: is required');
      return true;
    });
  });

  it('gives the handlers what Escouade said', async () => {
    let lang: string | undefined;
    let id = '';
    const plugin = new Plugin().onStart((p) => {
      lang = p.lang;
      id = p.pluginId;
    });
    await new TestEscouade(plugin, { lang: 'fr', id: 'dev.example.x' }).start();
    assert.equal(lang, 'fr');
    assert.equal(id, 'dev.example.x');
  });
});

describe('decisions', () => {
  it('answers with the decision and its message', async () => {
    const plugin = new Plugin().onDecide((d) =>
      String(d.request.input?.command).includes('rm -rf') ? deny('never') : allow(),
    );
    const e = new TestEscouade(plugin);
    await e.start();
    assert.deepEqual(await e.decide({ request }), { decision: 'deny', message: 'never' });
    assert.deepEqual(await e.decide({ request: { id: 'r2', kind: 'read' } }), { decision: 'allow' });
  });

  it('answers -32602 with the first problem when the params do not hold', async () => {
    const e = new TestEscouade(new Plugin().onDecide(() => allow()));
    await e.start();
    await assert.rejects(e.request('permissions/decide', { project: { id: 'p', name: 'P', private: false } }), {
      code: -32602,
      message: 'params.request: is required',
    });
    await assert.rejects(
      e.request('permissions/decide', { request: { id: 'r', kind: 3 }, project: { id: 'p', name: 'P', private: false } }),
      { code: -32602, message: 'params.request.kind: must be a string' },
    );
  });

  it('answers -32603 when the handler throws, with its code when it is an EscouadeError', async () => {
    let n = 0;
    const plugin = new Plugin().onDecide(() => {
      if (++n === 1) throw new Error('the rules are broken');
      throw new EscouadeError(-32003, 'not for this plugin');
    });
    const e = new TestEscouade(plugin);
    await e.start();
    await assert.rejects(e.decide({ request }), { code: -32603, message: 'permissions/decide: the rules are broken' });
    await assert.rejects(e.decide({ request }), { code: -32003, message: 'not for this plugin' });
  });

  it('writes the answer of a handler that returned a value while its line is taken', async () => {
    const e = new TestEscouade(new Plugin().onDecide(() => allow('at once')));
    await e.start();
    const before = e.written.length;
    const decided = e.decide({ request });
    // No promise between the line and its answer: written before the request's call returned.
    assert.equal(e.written.length, before + 1);
    assert.deepEqual(await decided, { decision: 'allow', message: 'at once' });
  });

  it('waits for a handler that returned a promise or another thenable, as await would', async () => {
    const plugin = new Plugin()
      .onDecide(() => ({ then: (resolve: (d: unknown) => void) => resolve(deny('from a thenable')) }) as never)
      .on('agent/attach', async () => {
        await new Promise<void>((resolve) => setTimeout(resolve, 1));
        return { later: true };
      });
    const e = new TestEscouade(plugin);
    await e.start();
    assert.deepEqual(await e.decide({ request }), { decision: 'deny', message: 'from a thenable' });
    assert.deepEqual(await e.request('agent/attach', {}), { later: true });
    const rejecting = new TestEscouade(new Plugin().onDecide(() => Promise.reject(new Error('no rules'))));
    await rejecting.start();
    await assert.rejects(rejecting.decide({ request }), { code: -32603, message: 'permissions/decide: no rules' });
  });

  it('writes the answer of an async handler in the job that takes its value, not after a chain of them', async () => {
    const e = new TestEscouade(new Plugin().onDecide(async () => allow('soon')));
    await e.start();
    const before = e.written.length;
    const decided = e.decide({ request });
    // The job that takes the handler's value checks it and writes its answer; this await's job
    // comes after it (inside the sandbox each job costs several times Node's: docs/authors.md).
    await null;
    assert.equal(e.written.length, before + 1);
    assert.deepEqual(await decided, { decision: 'allow', message: 'soon' });
  });

  it('answers -32603 when the handler answers something that is not a decision', async () => {
    const plugin = new Plugin().onDecide(() => ({ decision: 'maybe' }) as never);
    const e = new TestEscouade(plugin);
    await e.start();
    await assert.rejects(e.decide({ request }), {
      code: -32603,
      message: 'permissions/decide: the handler\'s answer does not hold (result.decision: must be one of "allow", "deny", "ask")',
    });
  });
});

describe('methods', () => {
  it('answers -32601 for a method it does not serve, and serves those it was given', async () => {
    const plugin = new Plugin({ id: 'dev.example.test' }).on('agent/attach', (params) => ({ seen: params }));
    const e = new TestEscouade(plugin);
    await e.start();
    await assert.rejects(e.request('nothing/here', {}), { code: -32601, message: 'nothing/here: not a method of dev.example.test' });
    assert.deepEqual(await e.request('agent/attach', { a: 1 }), { seen: { a: 1 } });
    // permissions/decide without a handler is a method it does not serve.
    await assert.rejects(e.decide({ request }), { code: -32601 });
  });

  it('answers a line that is not JSON with -32700 and one that is not a request with -32600', async () => {
    const e = new TestEscouade(new Plugin());
    await e.start();
    const [parse] = (await e.line('{"jsonrpc":')) as { id: unknown; error: { code: number } }[];
    assert.equal(parse!.id, null);
    assert.equal(parse!.error.code, -32700);
    const [bad] = (await e.line('{"jsonrpc":"1.0","id":7,"method":"x"}')) as { id: unknown; error: { code: number } }[];
    assert.deepEqual([bad!.id, bad!.error.code], [7, -32600]);
    const [wrongId] = (await e.line('{"jsonrpc":"2.0","id":{},"method":"x"}')) as { id: unknown; error: { code: number } }[];
    assert.deepEqual([wrongId!.id, wrongId!.error.code], [null, -32600]);
    assert.deepEqual(await e.line('[]'), [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'an empty batch' } }]);
    // An answer to no call of the plugin's is set aside; the plugin goes on serving.
    assert.deepEqual(await e.line('{"jsonrpc":"2.0","id":99,"result":1}'), []);
    assert.deepEqual(await e.request('nothing', null).catch((x: EscouadeError) => x.code), -32601);
  });

  it('answers a batch once each of its members is served, those that wait in their place', async () => {
    const plugin = new Plugin()
      .onDecide(async () => {
        await new Promise<void>((resolve) => setTimeout(resolve, 1));
        return deny('later');
      })
      .on('agent/attach', () => Promise.reject(new Error('no agent')))
      .on('agent/detach', () => ({ at: 'once' }));
    const e = new TestEscouade(plugin);
    await e.start();
    const project = { id: 'p', name: 'P', private: false };
    const written = await e.line(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'permissions/decide', params: { request, project } },
        { jsonrpc: '2.0', id: 2, method: 'agent/attach', params: {} },
        { jsonrpc: '2.0', id: 3, method: 'agent/detach', params: {} },
      ]),
    );
    assert.equal(written.length, 1);
    const batch = written[0] as { id: unknown; result?: unknown; error?: { code: number; message: string } }[];
    assert.deepEqual(
      batch.map((r) => [r.id, r.result ?? [r.error!.code, r.error!.message]]),
      [
        [1, { decision: 'deny', message: 'later' }],
        [2, [-32603, 'agent/attach: no agent']],
        [3, { at: 'once' }],
      ],
    );
  });

  it('answers a batch with one batch, in order, notifications left out', async () => {
    const facts: string[] = [];
    const plugin = new Plugin().onDecide(() => ask('the user')).onFact((f) => {
      facts.push(f.name);
    });
    const e = new TestEscouade(plugin);
    await e.start();
    const fact: Fact = { name: 'agent.status', version: 1, seq: 1, at: 'now', data: {} };
    const project = { id: 'p', name: 'P', private: false };
    const written = await e.line(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'permissions/decide', params: { request, project } },
        { jsonrpc: '2.0', method: 'events/fact', params: fact },
        { jsonrpc: '2.0', id: 'b', method: 'unknown/method' },
        { jsonrpc: '2.0', id: 3, method: 'permissions/decide', params: {} },
      ]),
    );
    assert.equal(written.length, 1);
    const batch = written[0] as { id: unknown; result?: unknown; error?: { code: number } }[];
    assert.deepEqual(
      batch.map((r) => [r.id, r.result ?? r.error!.code]),
      [
        [1, { decision: 'ask', message: 'the user' }],
        ['b', -32601],
        [3, -32602],
      ],
    );
    assert.deepEqual(facts, ['agent.status']);
  });
});

describe('facts', () => {
  it('goes to the handlers of its name, of its family and of all facts', async () => {
    const heard: string[] = [];
    const plugin = new Plugin()
      .onFact('ticket.column', (f) => void heard.push('column:' + f.name))
      .onFact('ticket.*', (f) => void heard.push('ticket:' + f.name))
      .onFact((f) => void heard.push('all:' + f.name));
    const e = new TestEscouade(plugin);
    await e.start();
    await e.fact({ name: 'ticket.column', data: { from: 'doing', to: 'done' } });
    await e.fact({ name: 'agent.status' });
    assert.deepEqual(heard, ['column:ticket.column', 'ticket:ticket.column', 'all:ticket.column', 'all:agent.status']);
  });

  it('says in the journal when a handler fails, and goes on', async () => {
    const heard: string[] = [];
    const plugin = new Plugin()
      .onFact('agent.status', () => {
        throw new Error('boom');
      })
      .onFact('agent.status', (f) => void heard.push(f.name));
    const e = new TestEscouade(plugin);
    await e.start();
    await e.fact({ name: 'agent.status' });
    assert.deepEqual(heard, ['agent.status']);
    assert.deepEqual(e.logs, [{ level: 'error', message: 'the handler of agent.status failed: boom' }]);
  });

  it('gives a fact to handlers that return nothing while its line is taken', async () => {
    const heard: string[] = [];
    const plugin = new Plugin().onFact('agent.status', (f) => void heard.push(f.name)).onFact((f) => void heard.push('all:' + f.name));
    const e = new TestEscouade(plugin);
    await e.start();
    e.tell('events/fact', { name: 'agent.status', version: 1, seq: 1, at: 'x', data: {} });
    assert.deepEqual(heard, ['agent.status', 'all:agent.status']);
    await e.idle();
  });

  it('runs its handlers one after the other, each once the promise of the one before settled', async () => {
    const heard: string[] = [];
    const plugin = new Plugin()
      .onFact('agent.status', async () => {
        heard.push('first begins');
        await new Promise<void>((resolve) => setTimeout(resolve, 1));
        heard.push('first ends');
      })
      .onFact('agent.status', () => Promise.reject(new Error('rejected')))
      .onFact('agent.status', () => {
        heard.push('third');
        throw new Error('thrown');
      })
      .onFact('agent.status', () => ({ then: (resolve: () => void) => setTimeout(resolve, 1) }) as never)
      .onFact((f) => void heard.push('all:' + f.name));
    const e = new TestEscouade(plugin);
    await e.start();
    await e.fact({ name: 'agent.status' });
    assert.deepEqual(heard, ['first begins', 'first ends', 'third', 'all:agent.status']);
    assert.deepEqual(e.logs, [
      { level: 'error', message: 'the handler of agent.status failed: rejected' },
      { level: 'error', message: 'the handler of agent.status failed: thrown' },
    ]);
  });

  it('gives a fact of a name it does not know to the handlers of its family and of all facts', async () => {
    const heard: string[] = [];
    const plugin = new Plugin()
      .onFact('ticket.*', (f) => void heard.push('ticket:' + f.name))
      .onFact('agent.status', (f) => void heard.push('status:' + f.name))
      .onFact((f) => void heard.push('all:' + f.name));
    const e = new TestEscouade(plugin);
    await e.start();
    await e.notify('events/fact', { name: 'ticket.archived', version: 1, seq: 1, at: 'x', data: {}, extra: true });
    assert.deepEqual(heard, ['ticket:ticket.archived', 'all:ticket.archived']);
    assert.deepEqual(e.logs, []);
  });

  it('answers -32601 to a method named like an object property', async () => {
    const e = new TestEscouade(new Plugin());
    await e.start();
    for (const m of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      await assert.rejects(e.request(m, {}), { code: -32601 }, m);
  });

  it('sets aside a fact that does not hold, with a warning in the journal', async () => {
    const heard: string[] = [];
    const e = new TestEscouade(new Plugin().onFact((f) => void heard.push(f.name)));
    await e.start();
    await e.notify('events/fact', { name: 'agent.status', version: 1, at: 'x', data: {} });
    assert.deepEqual(heard, []);
    assert.deepEqual(e.logs, [{ level: 'warn', message: 'events/fact set aside: params.seq: is required' }]);
  });
});

describe('calls to Escouade', () => {
  it('gets secrets, settings (a project over the user) and its own files', async () => {
    const seen: unknown[] = [];
    const plugin = new Plugin().onFact(async (f, p) => {
      seen.push(await p.secret('token'), await p.secret('other'));
      seen.push(await p.settings(), await p.settings(f.project?.id));
      seen.push(await p.file('data/words.txt'));
      seen.push(await p.file('missing.txt').catch((e: EscouadeError) => [e.code, e.codeName]));
    });
    const e = new TestEscouade(plugin, {
      secrets: { token: 's3cret' },
      settings: { channel: '#dev', loud: false },
      projectSettings: { p1: { channel: '#ops' } },
      files: { 'data/words.txt': 'a\nb\n' },
    });
    await e.start();
    await e.fact({ name: 'ticket.column', project: { id: 'p1', name: 'One', private: false } });
    assert.deepEqual(seen, [
      's3cret',
      null,
      { channel: '#dev', loud: false },
      { channel: '#ops', loud: false },
      'a\nb\n',
      [-32005, 'notFound'],
    ]);
  });

  it('writes its journal lines with their levels', async () => {
    const plugin = new Plugin().onStart((p) => {
      p.log.info('one');
      p.log('warn', 'two');
      p.log.error('three');
      p.log.debug('four');
    });
    const e = new TestEscouade(plugin);
    await e.start();
    assert.deepEqual(
      e.logs.map((l) => `${l.level}:${l.message}`),
      ['info:one', 'warn:two', 'error:three', 'debug:four'],
    );
  });

  it('sends a batch of calls as one message, each answered on its own', async () => {
    let answers: unknown[] = [];
    const plugin = new Plugin().onStart(async (p) => {
      answers = await Promise.allSettled(
        p.batch([
          { method: 'secrets/get', params: { key: 'token' } },
          { method: 'files/read', params: { path: 'nope' } },
        ]),
      );
    });
    const e = new TestEscouade(plugin, { secrets: { token: 't' } });
    await e.start();
    const batches = e.written.filter((w) => Array.isArray(w)) as { method: string }[][];
    assert.deepEqual(batches.map((b) => b.map((m) => m.method)), [['secrets/get', 'files/read']]);
    assert.deepEqual((answers[0] as PromiseFulfilledResult<unknown>).value, 't');
    assert.equal(((answers[1] as PromiseRejectedResult).reason as EscouadeError).code, -32005);
  });

  it('rejects a call Escouade leaves without an answer past its delay', async (t) => {
    // Node's mocked clock (Node 20.4 and later; its options object since 20.11).
    if (!t.mock.timers) return t.skip('this Node has no mocked clock (Node 20.4 and later)');
    (t.mock.timers.enable as unknown as (o: { apis: string[] }) => void)({ apis: ['setTimeout'] });
    let failure: EscouadeError | undefined;
    const plugin = new Plugin().onFact(async (_f, p) => {
      failure = await p.file('slow.txt').then(
        () => undefined,
        (e: EscouadeError) => e,
      );
    });
    const e = new TestEscouade(plugin, { handlers: { 'files/read': () => new Promise(() => undefined) } });
    const started = e.request('initialize', {
      protocolVersion: 1,
      escouade: { version: '2.2.0' },
      plugin: { id: 'dev.example.test', version: '1.0.0' },
      capabilities: {},
    });
    await started;
    for (let i = 0; i < 5; ++i) await Promise.resolve();
    const fact = e.notify('events/fact', { name: 'agent.status', version: 1, seq: 1, at: 'x', data: {} });
    for (let i = 0; i < 20 && failure === undefined; ++i) {
      t.mock.timers.tick(1000);
      await new Promise<void>((resolve) => queueMicrotask(resolve));
    }
    t.mock.timers.reset();
    await fact;
    assert.equal(failure?.code, -32004);
    assert.equal(failure?.message, 'files/read: no answer from Escouade within 5000 ms');
  });

  it('rejects the calls still waiting when the input ends', async () => {
    let failure: EscouadeError | undefined;
    const plugin = new Plugin().onFact(async (_f, p) => {
      failure = await p.secret('k').then(
        () => undefined,
        (e: EscouadeError) => e,
      );
    });
    const e = new TestEscouade(plugin, { handlers: { 'secrets/get': () => new Promise(() => undefined) } });
    await e.start();
    void e.notify('events/fact', { name: 'agent.status', version: 1, seq: 1, at: 'x', data: {} });
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(await e.closeInput(), 0);
    assert.equal(failure?.message, "secrets/get: Escouade closed the plugin's input before answering");
  });
});

describe('the end', () => {
  it('runs the shutdown handlers, answers shutdown, then exits 0', async () => {
    const order: string[] = [];
    const plugin = new Plugin().onShutdown(async (p) => {
      order.push('shutdown');
      p.log.info('bye');
    });
    const e = new TestEscouade(plugin);
    await e.start();
    assert.equal(await e.shutdown(), 0);
    assert.deepEqual(order, ['shutdown']);
    assert.equal(e.exitCode, 0);
    assert.deepEqual(e.logs, [{ level: 'info', message: 'bye' }]);
  });

  it('runs them too when its input ends, once', async () => {
    let runs = 0;
    const e = new TestEscouade(new Plugin().onShutdown(() => void ++runs));
    await e.start();
    assert.equal(await e.closeInput(), 0);
    assert.equal(runs, 1);
  });
});
