// bench/plugins/services.mjs run by Node as a process, with what a process may do itself: read
// a file of its folder and start `true`, without the host (bench/host_bench_services.cpp's
// "direct" figures). The sandbox refuses these imports, so they live in this file alone.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

globalThis.benchDirect = {
  'test/direct-read': (params) => ({
    size: readFileSync(new URL(params.path, import.meta.url), 'utf8').length,
  }),
  'test/direct-spawn': () =>
    new Promise((resolve, reject) => {
      const child = spawn('true', [], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code }));
    }),
};

await import('./services.mjs');
