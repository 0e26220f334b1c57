// The plugin in memory (TestEscouade, an Escouade without a host): what it writes in its
// journal when it starts and hears facts, and how it decides. npm test runs it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { TestEscouade } from '@escouade-dev/plugin/testing';

import { plugin } from '../src/plugin';

const project = { id: 'p1', name: 'Project One', private: false };

describe('@ID@', () => {
  it('leaves every request to the user, with a message', async () => {
    const e = new TestEscouade(plugin, { id: '@ID@' });
    await e.start();
    assert.deepEqual(await e.decide({ request: { id: 'r1', kind: 'command', tool: 'Bash', input: { command: 'ls' } } }), {
      decision: 'ask',
      message: '@ID@ has no rule for a request of kind command yet',
    });
  });

  it('writes when it starts and the facts it hears in its journal', async () => {
    const e = new TestEscouade(plugin, { id: '@ID@' });
    await e.start();
    await e.fact({ name: 'agent.status', project, data: { status: 'working', was: 'idle' } });
    await e.fact({ name: 'ticket.column', data: { from: 'todo', to: 'doing' } });
    assert.deepEqual(e.logs, [
      { level: 'info', message: 'started as a process' },
      { level: 'info', message: 'fact agent.status: working in Project One' },
      { level: 'info', message: 'fact ticket.column' },
    ]);
    assert.equal(await e.shutdown(), 0);
  });
});
