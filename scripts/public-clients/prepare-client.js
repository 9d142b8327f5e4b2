/**
 * A public client put in a working directory: a git directory's HEAD (a mirror) extracted, or a
 * plain directory copied, unless `marker` is already there; then its npm commands run (no scripts).
 * Used by scripts/public-clients-sign-in.js and scripts/public-clients-devices.js.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export function prepareClient(source, dir, install, marker = 'package.json') {
  if (!existsSync(path.join(dir, marker))) {
    mkdirSync(dir, { recursive: true });
    if (existsSync(path.join(source, 'HEAD')) && existsSync(path.join(source, 'objects'))) {
      execFileSync('sh', ['-c', 'git --git-dir="$1" archive HEAD | tar -x -C "$2"', 'sh', source, dir]);
    } else {
      execFileSync('cp', ['-R', `${source}/.`, dir]);
    }
  }
  for (const command of install) execFileSync('npm', [...command, '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
  return dir;
}
