// The guard-ts example (examples/guard-ts) with its decision handler written `async`, as most
// authors write their handlers: the same rules, the same verdicts, one promise more a request.
// bench_host sandbox ts times it in the sandbox and under Node (docs/PERFORMANCE.md). Its rules
// are the example's rules.json, bundled (the example reads them with files/read at its start).

import { Plugin } from '@escouade-dev/plugin';

import rulesJson from '../../../../examples/guard-ts/rules.json';
import { decide, parseRules } from '../../../../examples/guard-ts/src/rules';

const rules = parseRules(JSON.stringify(rulesJson));

void new Plugin({ id: 'dev.bench.guard-ts-async' })
  .onDecide(async ({ request }) => decide(rules, request))
  .run();
