// `npm run release`: one artifact, release/podium-<version>.tgz — the npm tarball of the root package
// (compiled server and CLI, console, docs; no sources, no dev dependencies), built from scratch in a
// staging directory. It installs anywhere with Node ≥ 20.19:
//   mkdir podium && tar xzf podium-<version>.tgz -C podium --strip-components=1
//   cd podium && npm install --omit=dev && npx podium serve
// The packages for publishers are packed on their own: `npm pack --workspace packages/<dir>`.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const dest = join(root, 'release');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const stage = mkdtempSync(join(tmpdir(), 'podium-release-'));
const npm = (args, cwd) =>
  execFileSync('npm', [...args, '--silent'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

try {
  mkdirSync(dest, { recursive: true });
  // dist is built fresh into the stage below, never copied: the checkout's own dist may be absent or mid-rebuild.
  for (const f of ['package.json', ...pkg.files].filter((f) => f !== 'dist')) {
    cpSync(join(root, f), join(stage, f), { recursive: true });
  }
  execFileSync(process.execPath, [join(root, 'scripts/build.js'), '--out', join(stage, 'dist')], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const tarball = npm(['pack', '--pack-destination', dest], stage).trim().split('\n').pop();
  process.stdout.write(`${join(dest, tarball)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
