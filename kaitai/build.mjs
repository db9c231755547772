#!/usr/bin/env node
// Compiles every kaitai/*.ksy to Python with the official Kaitai Struct
// compiler (npm build, programmatic API) into kaitai/generated/.
//
//   node kaitai/build.mjs           regenerate kaitai/generated/
//   node kaitai/build.mjs --check   compile in memory; exit 1 and list the
//                                   stale, missing and extra files when
//                                   kaitai/generated/ differs
//
// Exit codes: 0 ok, 1 generated code out of date (--check), 2 a spec does not
// compile or the script was misused.
//
// The npm compiler has no --python-package option, so a spec that imports
// another comes out with a top-level `import other`; it is rewritten to
// `from . import other` so the modules import as kaitai.generated.<name>.

import { readFileSync, readdirSync, writeFileSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const KaitaiStructCompiler = require('kaitai-struct-compiler');
const yaml = require('js-yaml');

const KAITAI_DIR = dirname(fileURLToPath(import.meta.url));
const OUT_DIR = join(KAITAI_DIR, 'generated');
const EXPECTED_COMPILER = '0.11.0';

const INIT_PY = `"""Python parsers generated from kaitai/*.ksy by kaitai/build.mjs: do not edit.

Regenerate with \`node kaitai/build.mjs\`; CI runs \`node kaitai/build.mjs --check\`.
"""
`;

function loadSpec(path) {
  return yaml.load(readFileSync(path, 'utf8'), { filename: path });
}

// Resolves `imports:` entries. Relative imports are looked up beside the
// importing spec; absolute ones (`/name`) from kaitai/ itself. Every spec
// lives in kaitai/, so both resolve to the same directory.
const importer = {
  importYaml(name, mode) {
    const path = join(KAITAI_DIR, `${name}.ksy`);
    if (!existsSync(path)) {
      return Promise.reject(new Error(`import '${name}' (${mode}): no such file ${path}`));
    }
    return Promise.resolve(loadSpec(path));
  },
};

function postProcess(source, moduleNames) {
  let text = source.replace(/^import (\w+)$/gm, (line, mod) =>
    moduleNames.has(mod) ? `from . import ${mod}` : line,
  );
  text = text.replace(/\r\n/g, '\n').replace(/[ \t]+$/gm, '');
  return text.replace(/\n*$/, '\n');
}

async function compileAll() {
  if (KaitaiStructCompiler.version !== EXPECTED_COMPILER) {
    throw new Error(
      `kaitai-struct-compiler ${KaitaiStructCompiler.version} installed, ` +
        `${EXPECTED_COMPILER} expected: run npm ci --prefix kaitai`,
    );
  }
  const specs = readdirSync(KAITAI_DIR)
    .filter((f) => f.endsWith('.ksy'))
    .sort();
  const moduleNames = new Set(specs.map((f) => basename(f, '.ksy')));
  const files = new Map([['__init__.py', INIT_PY]]);
  const problems = [];
  for (const spec of specs) {
    let output;
    try {
      const parsed = loadSpec(join(KAITAI_DIR, spec));
      if (parsed?.meta?.id !== basename(spec, '.ksy')) {
        throw new Error(`meta/id '${parsed?.meta?.id}' must equal the file name`);
      }
      output = await KaitaiStructCompiler.compile('python', parsed, importer, false);
    } catch (e) {
      problems.push(`${spec}: ${String(e)}`);
      continue;
    }
    // Compiling a spec also emits the specs it imports; they must agree with
    // their own compilation.
    for (const [name, source] of Object.entries(output)) {
      const text = postProcess(source, moduleNames);
      if (files.has(name) && files.get(name) !== text) {
        problems.push(`${spec}: output ${name} differs from the one compiled from another spec`);
      }
      files.set(name, text);
    }
  }
  if (problems.length > 0) {
    const err = new Error(problems.join('\n'));
    err.compileProblems = true;
    throw err;
  }
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function existingFiles() {
  if (!existsSync(OUT_DIR)) return new Map();
  return new Map(
    readdirSync(OUT_DIR, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith('.py'))
      .map((d) => [d.name, readFileSync(join(OUT_DIR, d.name), 'utf8')]),
  );
}

function check(expected) {
  const actual = existingFiles();
  const lines = [];
  for (const [name, text] of expected) {
    if (!actual.has(name)) lines.push(`missing: kaitai/generated/${name}`);
    else if (actual.get(name) !== text) lines.push(`stale:   kaitai/generated/${name}`);
  }
  for (const name of actual.keys()) {
    if (!expected.has(name)) lines.push(`extra:   kaitai/generated/${name}`);
  }
  if (lines.length > 0) {
    console.error(lines.join('\n'));
    console.error('kaitai/generated/ is out of date: run node kaitai/build.mjs');
    return 1;
  }
  console.log(`kaitai/generated/ is up to date (${expected.size} files)`);
  return 0;
}

function write(expected) {
  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });
  for (const [name, text] of expected) writeFileSync(join(OUT_DIR, name), text);
  console.log(`wrote ${expected.size} files to kaitai/generated/`);
  return 0;
}

async function main(argv) {
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length > 0) {
    console.error(`usage: node kaitai/build.mjs [--check]\nunknown argument: ${unknown.join(' ')}`);
    return 2;
  }
  let expected;
  try {
    expected = await compileAll();
  } catch (e) {
    console.error(e.compileProblems ? e.message : String(e));
    return 2;
  }
  return argv.includes('--check') ? check(expected) : write(expected);
}

process.exitCode = await main(process.argv.slice(2));
