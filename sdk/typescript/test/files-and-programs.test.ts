// fs/* and proc/* through the SDK: the params it sends, base64 both ways, a program's output as
// events, as async iterables and whole, its notifications held until its spawn is answered.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fromBase64, Plugin, toBase64, type Context, type Program } from '@escouade-dev/plugin';
import { TestEscouade } from '@escouade-dev/plugin/testing';

// A plugin whose start runs `body` with the context, and the Escouade it talks to.
async function withContext(handlers: { [m: string]: (params: unknown) => unknown }, body: (p: Context) => Promise<void>) {
  let failure: unknown;
  const plugin = new Plugin().onStart(async (p) => {
    try {
      await body(p);
    } catch (e) {
      failure = e;
    }
  });
  const e = new TestEscouade(plugin, { handlers });
  await e.start();
  if (failure) throw failure;
  return e;
}

describe('base64', () => {
  it('goes both ways for every length and byte', () => {
    for (let n = 0; n < 70; ++n) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      const text = toBase64(bytes);
      assert.equal(text, Buffer.from(bytes).toString('base64'));
      assert.deepEqual(fromBase64(text), bytes);
    }
    assert.throws(() => fromBase64('ab*d'), /not base64: "\*" at 2/);
  });
});

describe('files', () => {
  it('sends what names a file as fs/* takes it, and reads text and bytes', async () => {
    const asked: unknown[] = [];
    const handlers = {
      'fs/read': (p: unknown) => {
        asked.push(p);
        return (p as { path: string }).path.endsWith('.bin') ? { dataBase64: toBase64(Uint8Array.of(0, 255, 10)) } : { text: 'hé' };
      },
      'fs/stat': (p: unknown) => (asked.push(p), { kind: 'file', bytes: 3, modified: 1 }),
      'fs/list': (p: unknown) => (asked.push(p), { entries: [{ name: 'a', kind: 'file', bytes: 1 }], truncated: false }),
      'fs/canon': (p: unknown) => (asked.push(p), { path: '/real/a' }),
    };
    const seen: unknown[] = [];
    await withContext(handlers, async (p) => {
      seen.push(await p.fs.readText({ root: 'agentRepo', agent: 'a1', path: 'README.md' }));
      seen.push(await p.fs.readBytes({ root: 'temp', path: 'x.bin' }));
      seen.push(await p.fs.readText({ root: 'temp', path: 'x.bin' }));
      seen.push(await p.fs.readBytes('/wt/a1/notes.txt'));
      seen.push(await p.fs.stat({ root: 'temp', path: 'x' }));
      seen.push(await p.fs.list({ root: 'temp', path: '' }));
      seen.push(await p.fs.canon({ root: 'temp', path: 'a' }));
    });
    assert.deepEqual(asked, [
      { path: 'README.md', root: 'agentRepo', agent: 'a1' },
      { path: 'x.bin', root: 'temp' },
      { path: 'x.bin', root: 'temp' },
      { path: '/wt/a1/notes.txt' },
      { path: 'x', root: 'temp' },
      { path: '', root: 'temp' },
      { path: 'a', root: 'temp' },
    ]);
    assert.deepEqual(seen, [
      'hé',
      Uint8Array.of(0, 255, 10),
      '\u0000\ufffd\n',
      new TextEncoder().encode('hé'),
      { kind: 'file', bytes: 3, modified: 1 },
      { entries: [{ name: 'a', kind: 'file', bytes: 1 }], truncated: false },
      '/real/a',
    ]);
  });

  it('writes text, bytes and appends', async () => {
    const asked: unknown[] = [];
    const handlers = { 'fs/write': (p: unknown) => (asked.push(p), { path: '/t/x', bytes: 1 }) };
    await withContext(handlers, async (p) => {
      await p.fs.write({ root: 'temp', path: 'x' }, 'text');
      await p.fs.write({ root: 'temp', path: 'x' }, Uint8Array.of(1, 2));
      await p.fs.write({ root: 'temp', path: 'x' }, Uint8Array.of(3).buffer);
      await p.fs.append({ root: 'temp', path: 'x' }, 'more');
      await assert.rejects(async () => p.fs.write({ root: 'temp', path: 'x' }, 3 as never), TypeError);
    });
    assert.deepEqual(asked, [
      { path: 'x', root: 'temp', text: 'text' },
      { path: 'x', root: 'temp', dataBase64: 'AQI=' },
      { path: 'x', root: 'temp', dataBase64: 'Aw==' },
      { path: 'x', root: 'temp', text: 'more', append: true },
    ]);
  });

  it('rejects with the host\'s code and sentence', async () => {
    const handlers = {
      'fs/read': () => {
        throw Object.assign(new Error('fs/read agent "x": refused: the root agent is not in its permissions.files'), { code: -32003 });
      },
    };
    await withContext(handlers, async (p) => {
      await assert.rejects(p.fs.read({ root: 'agent', agent: 'a1', path: 'x' }), {
        code: -32003,
        message: 'fs/read agent "x": refused: the root agent is not in its permissions.files',
      });
    });
  });
});

describe('programs', () => {
  // An Escouade whose proc/spawn answers `proc` and then plays `script` (proc/out, proc/exit).
  function programHost(e: () => TestEscouade, script: { method: string; params: object }[], early = false) {
    const asked: unknown[] = [];
    const handlers = {
      'proc/spawn': async (p: unknown) => {
        asked.push(p);
        // Early: the output comes before the spawn's answer, as it may from a quick program.
        if (early) for (const m of script) e().tell(m.method, m.params);
        else setTimeout(() => script.forEach((m) => e().tell(m.method, m.params)), 1);
        return { proc: 7 };
      },
      'proc/write': (p: unknown) => (asked.push(p), null),
      'proc/kill': (p: unknown) => (asked.push(p), null),
    };
    return { asked, handlers };
  }
  const script = [
    { method: 'proc/out', params: { proc: 7, stream: 'stdout', data: 'one\n' } },
    { method: 'proc/out', params: { proc: 7, stream: 'stderr', data: 'warn\n' } },
    { method: 'proc/out', params: { proc: 7, stream: 'stdout', data: 'two\n' } },
    { method: 'proc/exit', params: { proc: 7, code: 3 } },
  ];

  it('gives the output as events and the end as a promise', async () => {
    let escouade!: TestEscouade;
    const { asked, handlers } = programHost(() => escouade, script);
    const events: string[] = [];
    let program!: Program;
    const plugin = new Plugin().onStart(async (p) => {
      program = await p.proc.spawn({ command: 'git', args: ['status'], dir: 'agent', agent: 'a1', env: { A: 'b' } });
      program.on('stdout', (t) => void events.push('out:' + t)).on('stderr', (t) => void events.push('err:' + t));
      program.on('exit', (c) => void events.push('exit:' + c));
    });
    escouade = new TestEscouade(plugin, { handlers });
    await escouade.start();
    assert.deepEqual(await program.exited, { code: 3 });
    assert.equal(program.code, 3);
    assert.deepEqual(events, ['out:one\n', 'err:warn\n', 'out:two\n', 'exit:3']);
    assert.deepEqual(asked, [{ command: 'git', args: ['status'], dir: 'agent', agent: 'a1', env: { A: 'b' } }]);
  });

  it('holds what comes before the spawn is answered, and gives it as async iterables', async () => {
    let escouade!: TestEscouade;
    const { handlers } = programHost(() => escouade, script, true);
    const pieces: string[] = [];
    let err = '';
    const plugin = new Plugin().onStart(async (p) => {
      const program = await p.proc.spawn({ command: 'git' });
      const errText = program.stderr.text();
      for await (const piece of program.stdout) pieces.push(piece);
      err = await errText;
    });
    escouade = new TestEscouade(plugin, { handlers });
    await escouade.start();
    assert.deepEqual(pieces, ['one\n', 'two\n']);
    assert.equal(err, 'warn\n');
  });

  it('runs a program with its input to its end, and writes and kills', async () => {
    let escouade!: TestEscouade;
    const { asked, handlers } = programHost(() => escouade, script);
    let run: unknown;
    const plugin = new Plugin().onStart(async (p) => {
      run = await p.proc.run({ command: 'sort', input: 'b\na\n' });
      const again = await p.proc.spawn({ command: 'cat' });
      await again.write('x');
      await again.kill();
      await again.exited;
    });
    escouade = new TestEscouade(plugin, { handlers });
    await escouade.start();
    assert.deepEqual(run, { code: 3, stdout: 'one\ntwo\n', stderr: 'warn\n' });
    assert.deepEqual(asked, [
      { command: 'sort' },
      { proc: 7, data: 'b\na\n', close: true },
      { command: 'cat' },
      { proc: 7, data: 'x' },
      { proc: 7 },
    ]);
  });

  it('sets aside the output of a program it did not start', async () => {
    const e = new TestEscouade(new Plugin());
    await e.start();
    await e.notify('proc/out', { proc: 99, stream: 'stdout', data: 'x' });
    await e.notify('proc/exit', { proc: 99, code: 0 });
    assert.deepEqual(e.logs, []);
  });
});
