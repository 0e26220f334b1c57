// Where the protocol's lines come from and go: the program's stdin and stdout, under Node as in
// the sandbox (whose prelude gives node:readline and process.stdout the same shape), or memory
// in tests (testing.ts).

import { createInterface } from 'node:readline';

/** One line of JSON a message, both ways, without its '\n'. */
export interface Transport {
  /** Starts reading: `line` for each line that comes, `end` once, when the input ends. */
  start(line: (text: string) => void, end: () => void): void;
  /** Sends one line (the transport adds the '\n'). */
  write(text: string): void;
  /** Ends the program with `code` once what was written has gone out. */
  exit(code: number): void;
}

/** Whether this code runs inside Escouade's sandbox (run.js) rather than under Node. */
export function inSandbox(): boolean {
  return (globalThis as { process?: { platform?: string } }).process?.platform === 'escouade';
}

/** The program's standard input and output. */
export function stdioTransport(): Transport {
  return {
    start(line, end) {
      const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
      rl.on('line', line);
      rl.on('close', end);
    },
    write(text) {
      process.stdout.write(text + '\n');
    },
    exit(code) {
      // Under Node, stdout to a pipe is written asynchronously: exit once it has drained.
      process.stdout.write('', () => process.exit(code));
    },
  };
}
