#!/usr/bin/env node
// escouade-plugin-build: bundles a plugin written with @escouade-dev/plugin into one ES module
// that both Node and Escouade's sandbox run, and checks it as the sandbox will; `test` bundles
// and runs the plugin's tests with Node's test runner.
//
//   escouade-plugin-build [--entry src/main.ts] [--outfile dist/plugin.mjs] [--minify]
//   escouade-plugin-build test [file or folder...]      (default: test/, *.test.ts)
//   escouade-plugin-build check <bundle.mjs>            (checks a bundle made otherwise)
//
// Run in the plugin's folder. The entry defaults to package.json's "escouade.entry", else
// src/main.ts; the bundle to the manifest's run.js (or the .mjs its run.command gives node),
// else dist/plugin.mjs.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sdkFolder = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sdkVersion = JSON.parse(readFileSync(join(sdkFolder, 'package.json'), 'utf8')).version;
const mark = `// @escouade-dev/plugin ${sdkVersion}`;
// What the sandbox lets a bundle import (spec: "What a plugin in WASM cannot do").
const allowedImports = ['node:fs', 'node:readline'];
// The sandbox refuses a bundle past 8 MiB at the plugin's load (src/manifest/manifest.hpp).
const maxBundleBytes = 8 * 1024 * 1024;
// What Node lacks and the sandbox gives: globalThis._importMeta_, the spec's way to import.meta.
const prologue = 'globalThis._importMeta_ ??= { url: import.meta.url };';

function fail(message) {
  process.stderr.write(`escouade-plugin-build: ${message}\n`);
  process.exit(1);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

async function loadEsbuild() {
  try {
    return await import('esbuild');
  } catch (e) {
    fail(`esbuild cannot be loaded (${e.message}): install it with npm install --save-dev esbuild`);
  }
}

// The manifest's run: the bundle it names (run.js, or the .mjs its run.command gives node), and
// whether the plugin runs under Node only (run.command).
function runFromManifest(folder) {
  const manifest = readJson(join(folder, 'escouade-plugin.json'));
  const run = manifest && manifest.run;
  if (run && typeof run.js === 'string') return { outfile: run.js, nodeOnly: false };
  if (run && Array.isArray(run.command)) {
    const file = run.command.find((w, i) => i > 0 && typeof w === 'string' && w.endsWith('.mjs'));
    return { outfile: file, nodeOnly: true };
  }
  return { outfile: undefined, nodeOnly: false };
}

function parseArgs(argv) {
  const out = { files: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} takes a value`);
      return argv[++i];
    };
    if (a === '--entry') out.entry = value();
    else if (a === '--outfile') out.outfile = value();
    else if (a === '--minify') out.minify = true;
    else if (a === '--help' || a === '-h') out.help = true;
    else if (a.startsWith('-')) fail(`unknown option ${a} (see --help)`);
    else out.files.push(a);
  }
  return out;
}

// Why the sandbox would refuse this bundle, or undefined. `meta` is esbuild's metafile entry
// for it when the bundle was just made; a bundle made otherwise is read as text. With
// `nodeOnly` (the manifest runs it with node), importing Node's other modules is not a refusal:
// each is said in `notes`, since that bundle would not run in the sandbox.
export function refusal(text, meta, nodeOnly = false, notes = []) {
  const firstLine = text.split('\n', 1)[0].replace(/\r$/, '');
  const found = /^\/\/ @escouade-dev\/plugin (\d+)\.(\d+)/.exec(firstLine);
  if (!found) return `its first line is not "${mark}": build it with escouade-plugin-build`;
  if (Number(found[1]) === 0 && Number(found[2]) < 3)
    return `it was made with @escouade-dev/plugin ${firstLine.slice(24)}, which does not run in the sandbox: rebuild it with @escouade-dev/plugin 0.3 or later`;
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBundleBytes) return `it is ${bytes} bytes, past the 8 MiB (${maxBundleBytes} bytes) a bundle may be`;
  if (meta) {
    for (const imp of meta.imports) {
      if (imp.kind === 'dynamic-import')
        return `it imports "${imp.path}" at run time (import()): the sandbox loads no module, its bundle holds all its code`;
      if (imp.kind === 'require-call')
        return `it calls require("${imp.path}"): the sandbox loads no module; import only node:fs and node:readline`;
      if (allowedImports.includes(imp.path)) continue;
      if (nodeOnly) notes.push(`it imports "${imp.path}": it runs under Node only (the sandbox gives no module but node:fs and node:readline)`);
      else return `it imports "${imp.path}": a bundle may import only node:fs and node:readline (the sandbox gives no other module)`;
    }
    if (meta.exports.length > 0)
      return `its entry exports ${meta.exports.map((e) => `"${e}"`).join(', ')}: a plugin's bundle has no exports (move them to a module the entry imports)`;
  }
  return undefined;
}

async function build(args) {
  const folder = process.cwd();
  const pkg = readJson(join(folder, 'package.json')) ?? {};
  const entry = args.entry ?? pkg.escouade?.entry ?? (existsSync('src/main.ts') ? 'src/main.ts' : undefined);
  if (!entry) fail('no entry: give --entry, or "escouade": {"entry": ...} in package.json, or write src/main.ts');
  if (!existsSync(entry)) fail(`the entry ${entry} does not exist`);
  const run = runFromManifest(folder);
  const outfile = args.outfile ?? run.outfile ?? 'dist/plugin.mjs';
  const esbuild = await loadEsbuild();
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      // SpiderMonkey 102 inside Escouade, Node 18 or later outside.
      target: ['es2022', 'firefox102', 'node18'],
      banner: { js: `${mark}\n${prologue}` },
      alias: { fs: 'node:fs', readline: 'node:readline' },
      // Node's own modules stay imports (platform: 'node'); the sandbox's two are named here.
      external: allowedImports,
      minify: Boolean(args.minify),
      legalComments: 'none',
      charset: 'utf8',
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
  } catch (e) {
    const errors = e.errors ?? [];
    const lines = errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text));
    fail(`the bundle could not be made:\n  ${lines.join('\n  ') || e.message}`);
  }
  for (const w of result.warnings) {
    const at = w.location ? `${w.location.file}:${w.location.line}: ` : '';
    process.stderr.write(`escouade-plugin-build: warning: ${at}${w.text}\n`);
  }
  const file = result.outputFiles.find((f) => f.path.endsWith('.mjs') || f.path.endsWith('.js'));
  const meta = Object.entries(result.metafile.outputs).find(([path]) => resolve(path) === resolve(outfile))?.[1];
  const notes = [];
  const why = refusal(file.text, meta, run.nodeOnly, notes);
  if (why) fail(`${relative(folder, file.path)} would not run in Escouade's sandbox: ${why}`);
  for (const note of notes) process.stderr.write(`escouade-plugin-build: note: ${note}\n`);
  // An import() whose module is computed is left as it is by esbuild, which cannot know it; the
  // sandbox refuses it when it runs.
  if (/(^|[^.\w$])import\s*\(/m.test(file.text))
    process.stderr.write(
      'escouade-plugin-build: warning: the bundle calls import() at run time, which the sandbox ' +
        'refuses when it runs: a plugin imports its modules statically\n',
    );
  mkdirSync(dirname(resolve(outfile)), { recursive: true });
  writeFileSync(outfile, file.contents);
  process.stdout.write(`escouade-plugin-build: ${outfile} (${file.contents.length} bytes) from ${entry}\n`);
}

function testFiles(paths) {
  const found = [];
  const walk = (p) => {
    const s = statSync(p);
    if (s.isDirectory()) {
      for (const name of readdirSync(p).sort()) if (name !== 'node_modules') walk(join(p, name));
    } else if (/\.test\.(ts|mts|js|mjs)$/.test(p)) {
      found.push(p);
    }
  };
  for (const p of paths) {
    if (!existsSync(p)) fail(`${p} does not exist`);
    walk(p);
  }
  return found;
}

// In a test, import.meta.url is its own source file's, as if Node ran it where it lies: a test
// reads its fixtures beside it (new URL('../rules.json', import.meta.url)), not beside the bundle.
// Each file that names it, a package's too, gets a constant of its URL (on its first line: the
// lines stay where they are), and import.meta.url in code (not in strings) is defined as that
// constant.
const sourceUrlName = '__escouadeSourceUrl';
const sourceUrls = {
  name: 'escouade-source-urls',
  setup(b) {
    b.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, (a) => {
      const text = readFileSync(a.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const url = JSON.stringify(pathToFileURL(a.path).href);
      return {
        contents: `const ${sourceUrlName} = ${url}; ${text}`,
        loader: /\.m?ts$/.test(a.path) ? 'ts' : 'js',
      };
    });
  },
};

async function test(args) {
  const files = testFiles(args.files.length ? args.files : ['test']);
  if (files.length === 0) fail('no test found (files named *.test.ts)');
  const esbuild = await loadEsbuild();
  const outdir = join('.escouade-build', 'tests');
  rmSync(outdir, { recursive: true, force: true });
  try {
    await esbuild.build({
      entryPoints: files,
      outdir,
      outbase: '.',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: ['node18'],
      packages: 'bundle',
      // The tests' own tools (node:test, node:assert...) are Node's.
      external: ['node:*'],
      banner: { js: prologue },
      sourcemap: 'inline',
      logLevel: 'silent',
      plugins: [sourceUrls],
      define: { 'import.meta.url': sourceUrlName },
    });
  } catch (e) {
    const lines = (e.errors ?? []).map((m) => (m.location ? `${m.location.file}:${m.location.line}: ${m.text}` : m.text));
    fail(`the tests could not be built:\n  ${lines.join('\n  ') || e.message}`);
  }
  const built = files.map((f) => join(outdir, f.replace(/\.(ts|mts|js|mjs)$/, '.mjs')));
  const run = spawnSync(process.execPath, ['--enable-source-maps', '--test', ...built], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}

function check(args) {
  if (args.files.length !== 1) fail('check takes one bundle');
  const text = readFileSync(args.files[0], 'utf8');
  // Without esbuild's record, the imports and exports are judged by the sandbox at the load.
  const why = refusal(text, undefined);
  if (why) fail(`${args.files[0]} would not run in Escouade's sandbox: ${why}`);
  process.stdout.write(`escouade-plugin-build: ${args.files[0]}: its mark and its size hold\n`);
}

const [verb, ...rest] = process.argv.slice(2);
if (verb === 'test') await test(parseArgs(rest));
else if (verb === 'check') check(parseArgs(rest));
else {
  const args = parseArgs(verb === undefined ? [] : [verb, ...rest]);
  if (args.help) {
    process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 12).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
    process.exit(0);
  }
  if (args.files.length) fail(`unexpected ${args.files[0]} (see --help)`);
  await build(args);
}
