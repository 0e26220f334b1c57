// The three answers to permissions/decide.

import type { Decision } from './protocol';

/** Lets the agent go ahead; the message says why (the journal keeps it). */
export function allow(message?: string): Decision {
  return message === undefined ? { decision: 'allow' } : { decision: 'allow', message };
}

/** Refuses; the message is relayed to the agent. A deny wins over any other plugin's allow. */
export function deny(message?: string): Decision {
  return message === undefined ? { decision: 'deny' } : { decision: 'deny', message };
}

/** Leaves the choice to the user, who is asked as if no plugin had answered. */
export function ask(message?: string): Decision {
  return message === undefined ? { decision: 'ask' } : { decision: 'ask', message };
}
