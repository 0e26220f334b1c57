// The programs a plugin starts with proc/spawn: their output, which comes as proc/out and
// proc/exit notifications, as events and as async iterables of text.

import { Emitter } from './emitter';
import type { ProcExitParams, ProcOutParams, ProcSpawnParams } from './protocol';

/** What a Program needs of the plugin: its calls to Escouade. */
export interface ProgramCalls {
  write(proc: number, data: string | undefined, close: boolean): Promise<void>;
  kill(proc: number): Promise<void>;
}

/** The text of one of a program's streams, piece by piece as it comes. */
export class OutputStream implements AsyncIterable<string> {
  private readonly pieces: string[] = [];
  private readonly waiters: ((r: IteratorResult<string>) => void)[] = [];
  private ended = false;

  /** @internal */
  put(text: string): void {
    const w = this.waiters.shift();
    if (w) w({ value: text, done: false });
    else this.pieces.push(text);
  }

  /** @internal */
  end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return {
      next: () => {
        const piece = this.pieces.shift();
        if (piece !== undefined) return Promise.resolve({ value: piece, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
    };
  }

  /** Everything the stream gives until the program ends. */
  async text(): Promise<string> {
    let all = '';
    for await (const piece of this) all += piece;
    return all;
  }
}

type ProgramEvents = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  exit: (code: number | null) => void;
};

/** A program proc/spawn started. */
export class Program extends Emitter<ProgramEvents> {
  /** Its output, as it comes (read one way only: events, or iteration, or text()). */
  readonly stdout = new OutputStream();
  readonly stderr = new OutputStream();
  /** Resolves when it has ended and all its output came: code null when it was killed. */
  readonly exited: Promise<{ code: number | null }>;
  /** Its exit code once it has ended (null: killed); undefined while it runs. */
  code: number | null | undefined = undefined;
  private settle!: (v: { code: number | null }) => void;

  /** @internal */
  constructor(
    /** Escouade's number for it (proc). */
    readonly id: number,
    private readonly calls: ProgramCalls,
  ) {
    super();
    this.exited = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** Writes to its input; rejects (-32004) when more than 1 MiB of it is still unread. */
  write(data: string): Promise<void> {
    return this.calls.write(this.id, data, false);
  }

  /** Closes its input, after `data` when given. */
  end(data?: string): Promise<void> {
    return this.calls.write(this.id, data, true);
  }

  /** Ends it and everything it started; its exit (code null) follows. */
  kill(): Promise<void> {
    return this.calls.kill(this.id);
  }

  /** @internal */
  out(p: ProcOutParams): void {
    this.emit(p.stream, p.data);
    (p.stream === 'stderr' ? this.stderr : this.stdout).put(p.data);
  }

  /** @internal */
  finish(code: number | null): void {
    this.code = code;
    this.stdout.end();
    this.stderr.end();
    this.emit('exit', code);
    this.settle({ code });
  }
}

/** What proc.run gives: the program's whole output and its code. */
export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** proc.spawn's options: ProcSpawnParams. */
export type SpawnOptions = ProcSpawnParams;

/**
 * Routes proc/out and proc/exit to their Program. A notification for a program not known yet
 * (its spawn's answer has not come) is held while a spawn waits, then given to it.
 */
export class Programs {
  private readonly running = new Map<number, Program>();
  private readonly early: { method: string; params: ProcOutParams | ProcExitParams }[] = [];
  private spawning = 0;

  constructor(private readonly trace: (what: string) => void) {}

  /** Wraps a proc/spawn call: the Program of its answer, with what came before it. */
  async spawned(spawn: () => Promise<number>, calls: ProgramCalls): Promise<Program> {
    // Counted before the call goes out: its program's output may come before its answer.
    ++this.spawning;
    let proc: number;
    try {
      proc = await spawn();
    } finally {
      --this.spawning;
    }
    const p = new Program(proc, calls);
    this.running.set(proc, p);
    const held = this.early.splice(0);
    for (const m of held) this.take(m.method, m.params);
    return p;
  }

  /** Takes a proc/out or proc/exit; false when it is neither. */
  take(method: string, params: ProcOutParams | ProcExitParams): boolean {
    if (method !== 'proc/out' && method !== 'proc/exit') return false;
    const p = this.running.get(params.proc);
    if (p === undefined) {
      if (this.spawning > 0) this.early.push({ method, params });
      else this.trace(`${method} for a program the plugin did not start (proc ${params.proc}) was set aside`);
      return true;
    }
    if (method === 'proc/out') {
      p.out(params as ProcOutParams);
    } else {
      this.running.delete(p.id);
      p.finish((params as ProcExitParams).code);
    }
    return true;
  }
}
