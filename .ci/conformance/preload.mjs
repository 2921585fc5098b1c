// Loaded with `node --import` before the conformance suite (see
// crates/skarn/tests/it/serve_conformance.rs):
// - on node < 22 `fs` has no `globSync`, which the suite imports for its
//   tier-check command only: hooks.mjs gives the suite an `fs` with a stub;
// - the suite's client sends no credentials, and `skarn serve --http`
//   needs a bearer token on every request: every request the suite makes
//   (fetch and undici) gets `Authorization: Bearer $SKARN_CONFORMANCE_TOKEN`
//   unless it already has one.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);

const token = process.env.SKARN_CONFORMANCE_TOKEN;
if (token) {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init = {}) => {
    const base = init.headers ?? (input instanceof Request ? input.headers : undefined);
    const headers = new Headers(base);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    return original(input, { ...init, headers });
  };
}
