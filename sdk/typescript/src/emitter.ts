// A small event emitter: the SDK may import nothing but node:fs and node:readline (the sandbox
// loads no other module), so it has its own.

type Listener = (...args: never[]) => void;

export class Emitter<Events extends { [name: string]: (...args: never[]) => void }> {
  private readonly listeners = new Map<keyof Events, Listener[]>();

  on<E extends keyof Events>(name: E, listener: Events[E]): this {
    const list = this.listeners.get(name) ?? [];
    list.push(listener as Listener);
    this.listeners.set(name, list);
    return this;
  }

  once<E extends keyof Events>(name: E, listener: Events[E]): this {
    const once = ((...args: Parameters<Events[E]>) => {
      this.off(name, once as Events[E]);
      (listener as (...a: Parameters<Events[E]>) => void)(...args);
    }) as Events[E];
    return this.on(name, once);
  }

  off<E extends keyof Events>(name: E, listener: Events[E]): this {
    const list = this.listeners.get(name);
    if (list) {
      const i = list.indexOf(listener as Listener);
      if (i >= 0) list.splice(i, 1);
    }
    return this;
  }

  protected emit<E extends keyof Events>(name: E, ...args: Parameters<Events[E]>): void {
    for (const f of [...(this.listeners.get(name) ?? [])]) {
      (f as (...a: Parameters<Events[E]>) => void)(...args);
    }
  }
}
