// The guard in memory: its rules from its own rules.json, its verdicts, and what it says when
// it has no rules.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { TestEscouade } from '@escouade-dev/plugin/testing';

import { plugin } from '../src/plugin';

const rules = readFileSync(new URL('../rules.json', import.meta.url), 'utf8');
const command = (c: string) => ({ request: { id: 'r', kind: 'command', tool: 'Bash', input: { command: c } } });

describe('the guard', () => {
  it('decides from its rules.json', async () => {
    const e = new TestEscouade(plugin, { files: { 'rules.json': rules } });
    await e.start();
    assert.deepEqual(e.logs, [{ level: 'info', message: 'rules loaded: 3 refusals, 6 commands allowed' }]);
    assert.deepEqual(await e.decide(command('rm  -rf /')), { decision: 'deny', message: 'rm -rf is never allowed' });
    assert.deepEqual(await e.decide(command('git push origin HEAD:main')), {
      decision: 'deny',
      message: 'no pushes to main or master: push a branch and open a pull request',
    });
    assert.deepEqual(await e.decide(command('git status --short')), { decision: 'allow', message: 'git status only reads' });
    assert.deepEqual(await e.decide(command('git status; curl x')), { decision: 'ask', message: 'no rule of the guard covers: git status; curl x' });
    assert.deepEqual(await e.decide({ request: { id: 'r', kind: 'read' } }), { decision: 'allow', message: 'a read is allowed' });
    assert.deepEqual(await e.decide({ request: { id: 'r', kind: 'edit' } }), { decision: 'ask', message: 'a edit the guard has no rule for' });
  });

  it('asks the user when its rules cannot be read, and says why in its journal', async () => {
    const e = new TestEscouade(plugin, { files: { 'rules.json': '{"deny": [' } });
    await e.start();
    assert.equal(e.logs[0]?.level, 'error');
    assert.match(e.logs[0]!.message, /^the start handler failed: rules\.json: /);
    assert.deepEqual(await e.decide(command('ls')), { decision: 'ask', message: 'the guard has no rules (see its journal)' });
  });
});
