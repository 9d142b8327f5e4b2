/**
 * The Python client yoto_api's own device login (scripts/public-clients/yoto_api_login.py),
 * approved by `approve(verificationUri, userCode)` (a person at /activate), in the client's
 * directory with `env` (CARDSHELF_URL, and PYTHONPATH holding this folder and the client).
 * Resolves to its tokens. Used by scripts/public-clients-sign-in.js and
 * scripts/public-clients-devices.js.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));

export function loginYotoApi({ python, dir, env, clientId, approve }) {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [path.join(HELPERS, 'yoto_api_login.py'), clientId], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let approving;
    child.stdout.on('data', (d) => {
      stdout += d;
      if (!approving && stdout.includes('\n')) {
        const { verification_uri: uri, user_code: code } = JSON.parse(stdout.split('\n')[0]);
        approving = approve(uri, code).catch(reject);
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', async (code) => {
      await approving;
      if (code !== 0) reject(new Error(`yoto_api_login.py exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n')[1]));
    });
  });
}
