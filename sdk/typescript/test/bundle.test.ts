// escouade-plugin-build and the bundle it makes, run for real by Node as a plugin's process:
// its first line, what it may import and export, import.meta under Node, lines on stdio, the
// exit after shutdown.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { createInterface } from 'node:readline';

// The SDK's folder: the tests run from sdk/typescript (npm test, or escouade-plugin-build test).
const sdk = resolve('.');
const bin = join(sdk, 'bin', 'escouade-plugin-build.mjs');
// Beneath the SDK, so that '@escouade-dev/plugin' resolves as in a project that installed it.
mkdirSync(join(sdk, '.escouade-build'), { recursive: true });
const scratch = mkdtempSync(join(sdk, '.escouade-build', 'bundle-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let n = 0;
// A plugin folder with these files; the result of escouade-plugin-build run in it.
function build(files: { [path: string]: string }, args: string[] = []) {
  const folder = join(scratch, `p${++n}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: folder, encoding: 'utf8' });
  return { folder, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const echo = `
import { readFileSync } from 'node:fs';
import { Plugin, allow } from '@escouade-dev/plugin';
const rules = JSON.parse(readFileSync(new URL('../rules.json', globalThis._importMeta_.url), 'utf8'));
const again = readFileSync(new URL('../rules.json', import.meta.url), 'utf8');
new Plugin({ id: 'dev.example.echo' })
  .onDecide(() => allow(rules.say + ':' + JSON.parse(again).say))
  .run();
`;

describe('escouade-plugin-build', () => {
  it('makes one ES module marked with the SDK, importing only node:fs and node:readline', () => {
    const r = build({ 'src/main.ts': echo, 'rules.json': '{"say":"hi"}' });
    assert.equal(r.status, 0, r.stderr);
    const text = readFileSync(join(r.folder, 'dist/plugin.mjs'), 'utf8');
    assert.equal(text.split('\n')[0], '// @escouade-dev/plugin 0.3.0');
    const imports = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    assert.deepEqual([...new Set(imports)].sort(), ['node:fs', 'node:readline']);
    assert.doesNotMatch(text, /^export /m);
  });

  it('writes where the manifest\'s run names the bundle', () => {
    const manifest = JSON.stringify({ id: 'dev.example.x', run: { command: ['node', 'out/x.mjs'] } });
    const r = build({ 'src/main.ts': echo, 'escouade-plugin.json': manifest });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /out\/x\.mjs/);
  });

  it('fails with the reason for a bundle the sandbox would refuse', () => {
    const cases: [string, RegExp][] = [
      ["import { execSync } from 'node:child_process'; execSync('id');", /imports "(node:)?child_process": a bundle may import only node:fs and node:readline/],
      ["import * as os from 'os'; console.log(os.homedir());", /imports "os"/],
      ["export const x = 1;", /its entry exports "x": a plugin's bundle has no exports/],
      ["await import('node:net');", /imports "(node:)?net" at run time/],
      ["import x from './missing'; console.log(x);", /the bundle could not be made:\n.*missing/],
    ];
    for (const [source, why] of cases) {
      const r = build({ 'src/main.ts': source });
      assert.equal(r.status, 1, source);
      assert.match(r.stderr, why, source);
    }
  });

  it('lets a plugin run by node import Node\'s modules, and says it runs under Node only', () => {
    const manifest = JSON.stringify({ id: 'dev.example.x', run: { command: ['node', 'dist/plugin.mjs'] } });
    const r = build({ 'src/main.ts': "import { execSync } from 'node:child_process'; execSync('true');", 'escouade-plugin.json': manifest });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /note: it imports "(node:)?child_process": it runs under Node only/);
  });

  it('warns of an import() it cannot judge, which the sandbox refuses when it runs', () => {
    const r = build({ 'src/main.ts': "const m = 'node:' + 'net'; await import(m);" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /warning: the bundle calls import\(\) at run time/);
  });

  it('checks a bundle made otherwise: its mark', () => {
    const folder = join(scratch, 'made-otherwise');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'old.mjs'), '// @escouade-dev/plugin 0.2.4\nconsole.log(1);\n');
    const r = spawnSync(process.execPath, [bin, 'check', 'old.mjs'], { cwd: folder, encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /rebuild it with @escouade-dev\/plugin 0\.3 or later/);
  });
});

describe('escouade-plugin-build test', () => {
  it('gives each test file and each package its own import.meta.url', () => {
    const folder = join(scratch, 'tests-urls');
    const files: { [path: string]: string } = {
      'node_modules/dep/package.json': '{"name": "dep", "type": "module", "main": "index.mjs"}',
      'node_modules/dep/index.mjs': "export const where = () => new URL('.', import.meta.url).href;",
      'fixtures/rules.json': '{"ok": true}',
      'test/urls.test.ts': [
        "import assert from 'node:assert/strict';",
        "import { readFileSync } from 'node:fs';",
        "import { it } from 'node:test';",
        "import { where } from 'dep';",
        "it('reads beside its source', () => {",
        "  assert.deepEqual(JSON.parse(readFileSync(new URL('../fixtures/rules.json', import.meta.url), 'utf8')), { ok: true });",
        "  assert.match(where(), /node_modules\\/dep\\/$/);",
        '});',
      ].join('\n'),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(folder, path)), { recursive: true });
      writeFileSync(join(folder, path), text);
    }
    // Without this runner's own context, the inner runner reports as text.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(process.execPath, [bin, 'test'], { cwd: folder, encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# pass 1/);
  });
});

describe('the bundle under Node', () => {
  it('speaks the protocol on stdio, reads its root JSON files, and exits 0 after shutdown', async () => {
    const r = build({ 'src/main.ts': echo, 'rules.json': '{"say":"hi"}' });
    assert.equal(r.status, 0, r.stderr);
    const child = spawn(process.execPath, ['dist/plugin.mjs'], { cwd: r.folder, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
    const send = (m: unknown) => child.stdin!.write(JSON.stringify(m) + '\n');
    const ended = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));

    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: 1, escouade: { version: '2.2.0' }, plugin: { id: 'dev.example.echo', version: '1.0.0' }, capabilities: { batch: true } },
    });
    assert.deepEqual(await next(), { jsonrpc: '2.0', id: 1, result: { protocolVersion: 1, capabilities: { batch: true } } });
    const project = { id: 'p', name: 'P', private: false };
    send([
      { jsonrpc: '2.0', id: 2, method: 'permissions/decide', params: { request: { id: 'r', kind: 'read' }, project } },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
    ]);
    const batch = await next();
    assert.deepEqual(batch[0], { jsonrpc: '2.0', id: 2, result: { decision: 'allow', message: 'hi:hi' } });
    assert.equal(batch[1].error.code, -32601);
    child.stdin!.write('not json\n');
    assert.equal((await next()).error.code, -32700);
    send({ jsonrpc: '2.0', id: 4, method: 'shutdown', params: null });
    assert.deepEqual(await next(), { jsonrpc: '2.0', id: 4, result: null });
    assert.equal(await ended, 0);
  });
});
