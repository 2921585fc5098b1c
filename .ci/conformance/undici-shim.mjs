// `undici` whose `request` adds the gateway's bearer token (see preload.mjs).
import * as undici from 'undici';

export * from 'undici';

const token = process.env.SKARN_CONFORMANCE_TOKEN;

export function request(url, options = {}) {
  if (!token) return undici.request(url, options);
  const headers = { ...(options.headers ?? {}) };
  const has = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  if (!has) headers.authorization = `Bearer ${token}`;
  return undici.request(url, { ...options, headers });
}
