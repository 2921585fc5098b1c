// `fs` plus a `globSync` where node lacks one (node < 22).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export const globSync =
  fs.globSync ??
  function globSync() {
    throw new Error('fs.globSync needs node 22 or later (used by the tier-check command only)');
  };
