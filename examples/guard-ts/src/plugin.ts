// The guard: decides permission requests from the rules in its rules.json (rules.ts).
// src/main.ts runs it; the tests drive it in memory.

import { ask, Plugin } from '@escouade-dev/plugin';

import { decide, parseRules, type Rules } from './rules';

let rules: Rules | undefined;

export const plugin = new Plugin({ id: 'dev.example.guard-ts' })
  .onStart(async (p) => {
    rules = undefined;
    // files/read: the same call inside the sandbox and under Node.
    rules = parseRules(await p.file('rules.json'));
    p.log.info(`rules loaded: ${rules.deny.length} refusals, ${rules.allowCommands.length} commands allowed`);
  })
  .onDecide(({ request }) => (rules ? decide(rules, request) : ask('the guard has no rules (see its journal)')));
