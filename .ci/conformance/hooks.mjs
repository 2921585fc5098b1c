// Module hooks for the conformance suite (registered by preload.mjs): its
// imports of `fs` and `undici` get the shims next to this file.
const shims = {
  fs: './fs-shim.mjs',
  'node:fs': './fs-shim.mjs',
  undici: './undici-shim.mjs',
};

export async function resolve(specifier, context, next) {
  const shim = shims[specifier];
  if (shim && context.parentURL && /\/(@modelcontextprotocol\/conformance|conformance-2026-07-28)\//.test(context.parentURL)) {
    return { url: new URL(shim, import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
