// The notifier: when a ticket reaches the column "done", it prepares a message for the
// project's channel (the setting `channel`, "#dev" by default, a project's .escouade.yml over
// it) with the token kept in the keychain (secrets/get "token"). It posts nothing: it writes
// what it would post to its journal, and never the token. The C++ notifier's twin.

import { Plugin } from '@escouade-dev/plugin';

export const plugin = new Plugin({ id: 'dev.example.notifier-ts' }).onFact('ticket.column', async (fact, p) => {
  if (fact.data.to !== 'done') return;

  let channel = '#dev';
  try {
    const settings = await p.settings(fact.project?.id);
    if (typeof settings.channel === 'string' && settings.channel !== '') channel = settings.channel;
  } catch (e) {
    p.log.warn(`settings: ${(e as Error).message}`);
  }

  let token: string | null;
  try {
    token = await p.secret('token');
  } catch (e) {
    p.log.error(`no message to ${channel}: ${(e as Error).message}`);
    return;
  }
  if (!token) {
    p.log.warn(`no message to ${channel}: no token is kept (set the secret "token" of this plugin)`);
    return;
  }

  const what = fact.ticket ? `${fact.ticket.key} "${fact.ticket.title}"` : 'a ticket';
  const where = fact.project ? ` in ${fact.project.name}` : '';
  // The request a real notifier would send; the token goes in a header, never in a log line.
  p.log.info(`would post to ${channel}: ${what} is done${where} (authorized with the token, ${token.length} characters)`);
});
