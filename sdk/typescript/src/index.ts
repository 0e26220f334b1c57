// @escouade-dev/plugin: write an Escouade plugin in TypeScript, run it with Node as a process
// ("run": {"command": ["node", "dist/plugin.mjs"]}) or inside Escouade ("run": {"js":
// "dist/plugin.mjs"}), the same source. docs/authors.md has the guide.

export { Plugin, matches, type FactPattern, type FactHandler, type DecideHandler, type StartHandler, type PluginOptions, type Connection } from './plugin';
export { allow, deny, ask } from './decisions';
export { EscouadeError, invalidParams } from './errors';
export type { Context, Files, Proc, Log, Level, Where } from './context';
export { Program, OutputStream, type ProgramRun, type SpawnOptions } from './programs';
export { stdioTransport, inSandbox, type Transport } from './transport';
export { toBase64, fromBase64 } from './base64';
export * from './protocol';

/** The SDK's version; its bundles' first line says it (`// @escouade-dev/plugin 0.3.0`). */
export const sdkVersion = '0.3.0';
