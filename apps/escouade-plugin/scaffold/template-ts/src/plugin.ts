// @ID@: an Escouade plugin (protocol 1), written in TypeScript with @escouade-dev/plugin
// (vendor/escouade-dev-plugin; its guide is docs/authors.md of escouade-plugins, "TypeScript").
// src/main.ts runs it; test/plugin.test.ts drives it in memory.
// Standard output carries the protocol alone: write traces with p.log (the plugin's journal).

import { ask, Plugin, type Fact } from '@escouade-dev/plugin';

// " in <project>" when the fact names one.
const where = (fact: Fact) => (fact.project ? ` in ${fact.project.name}` : '');

export const plugin = new Plugin({ id: '@ID@' })
  // Once initialized, before any fact or request is served.
  .onStart((p) => p.log.info(`started ${p.sandboxed ? "inside Escouade's sandbox" : 'as a process'}`))
  // Escouade asks before an agent runs a command, edits a file or fetches a URL, and waits 500 ms
  // for the answer: allow(), deny('why') or ask() (the user decides, as without a plugin). This
  // one has no rule yet, so it leaves every request to the user.
  .onDecide(({ request }) => ask(`@ID@ has no rule for a request of kind ${request.kind} yet`))
  // The facts of permissions.events into the journal: agent.status by its name, the ticket
  // facts by their family.
  .onFact('agent.status', (fact, p) => p.log.info(`fact agent.status: ${String(fact.data.status)}${where(fact)}`))
  .onFact('ticket.*', (fact, p) => p.log.info(`fact ${fact.name}${where(fact)}`));
