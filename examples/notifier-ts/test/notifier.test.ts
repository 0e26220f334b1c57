// The notifier in memory: the message it would post, the project's channel over the user's, and
// what it says without a token.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { TestEscouade } from '@escouade-dev/plugin/testing';

import { plugin } from '../src/plugin';

const done = {
  name: 'ticket.column' as const,
  project: { id: 'p1', name: 'Project One', private: false },
  ticket: { id: 't', key: 'ESC-12', title: 'Fix login' },
  data: { from: 'review', to: 'done' },
};

describe('the notifier', () => {
  it('writes what it would post, with the project\'s channel, never the token', async () => {
    const e = new TestEscouade(plugin, {
      secrets: { token: 'xoxb-123456789012345678' },
      settings: { channel: '#dev' },
      projectSettings: { p1: { channel: '#ops' } },
    });
    await e.start();
    await e.fact(done);
    await e.fact({ ...done, data: { from: 'todo', to: 'doing' } });
    assert.deepEqual(e.logs, [
      { level: 'info', message: 'would post to #ops: ESC-12 "Fix login" is done in Project One (authorized with the token, 23 characters)' },
    ]);
    assert.doesNotMatch(JSON.stringify(e.written), /xoxb/);
  });

  it('says so when no token is kept', async () => {
    const e = new TestEscouade(plugin);
    await e.start();
    await e.fact(done);
    assert.deepEqual(e.logs, [{ level: 'warn', message: 'no message to #dev: no token is kept (set the secret "token" of this plugin)' }]);
  });
});
