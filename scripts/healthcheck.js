#!/usr/bin/env node
// The container's HEALTHCHECK: healthy while GET /readyz answers 200 (the database answers).
// No curl in the slim image; Node's fetch does it.
const port = process.env.PORT || '8080';
fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
