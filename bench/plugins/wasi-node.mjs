// A run.wasm plugin's plugin.wasm run as a process by Node's WASI (node:wasi), from the folder
// this file is copied into: the same module the sandbox runs, on another engine and with no host
// around it. bench_host's run.wasm figures put its decisions beside the sandbox's and the native
// build's (bench/host_bench_sandbox.cpp).
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const wasi = new WASI({ version: 'preview1', args: ['plugin.wasm'], env: {}, returnOnExit: true });
const module = new WebAssembly.Module(readFileSync(new URL('./plugin.wasm', import.meta.url)));
const instance = new WebAssembly.Instance(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
