// The guard's rules (rules.json) and the verdict they give on a permission request. Pure: read
// once, asked many times. The same rules and verdicts as the C++ guard (examples/guard).

import { allow, ask, deny, type Decision, type PermissionRequest } from '@escouade-dev/plugin';

export interface DenyRule {
  /** Refuse a command holding this text (words compared once spaces are collapsed). */
  contains?: string;
  /** Refuse `git push` naming one of these branches. */
  pushTo: string[];
  message: string;
}

export interface Rules {
  deny: DenyRule[];
  /** Request kinds allowed as they are ("read"). */
  allowKinds: string[];
  /** Commands allowed with any arguments ("git diff"). */
  allowCommands: string[];
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The rules in `text`; throws an Error saying why they do not hold. */
export function parseRules(text: string): Rules {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`rules.json: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('rules.json: not an object');
  const o = doc as { [key: string]: unknown };
  const rules: Rules = { deny: [], allowKinds: strings(o.allowKinds), allowCommands: strings(o.allowCommands) };
  for (const d of Array.isArray(o.deny) ? o.deny : []) {
    if (typeof d !== 'object' || d === null) continue;
    const r = d as { [key: string]: unknown };
    rules.deny.push({
      contains: typeof r.contains === 'string' && r.contains !== '' ? r.contains : undefined,
      pushTo: strings(r.pushTo),
      message: typeof r.message === 'string' && r.message !== '' ? r.message : "refused by the guard's rules",
    });
  }
  return rules;
}

const wordsOf = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

/** Whether `words` push to `branch`: `git push origin main`, `HEAD:main`, `refs/heads/main`... */
function pushesTo(words: string[], branch: string): boolean {
  for (let i = 0; i + 1 < words.length; ++i) {
    if (words[i] !== 'git' || words[i + 1] !== 'push') continue;
    for (let j = i + 2; j < words.length; ++j) {
      const w = words[j]!;
      if ([';', '&&', '||', '|'].includes(w)) break;
      const target = w.includes(':') ? w.slice(w.lastIndexOf(':') + 1) : w;
      if (target === branch || target === `refs/heads/${branch}`) return true;
    }
  }
  return false;
}

/** Shell syntax that could chain another command after an allowed one. */
const chains = (command: string): boolean => /[;|&`$<>\n]/.test(command);

export function decide(rules: Rules, request: PermissionRequest): Decision {
  const input = request.input?.command;
  const command = typeof input === 'string' ? input : '';
  const words = wordsOf(command);
  const spaced = words.join(' ');
  for (const rule of rules.deny) {
    if (rule.contains !== undefined && spaced.includes(rule.contains)) return deny(rule.message);
    if (rule.pushTo.some((branch) => pushesTo(words, branch))) return deny(rule.message);
  }
  if (rules.allowKinds.includes(request.kind)) return allow(`a ${request.kind} is allowed`);
  if (words.length > 0 && !chains(command)) {
    for (const allowed of rules.allowCommands) {
      const prefix = wordsOf(allowed);
      if (prefix.length > 0 && prefix.length <= words.length && prefix.every((w, i) => w === words[i]))
        return allow(`${allowed} only reads`);
    }
  }
  if (command === '') return ask(`a ${request.kind} the guard has no rule for`);
  return ask(`no rule of the guard covers: ${command}`);
}
