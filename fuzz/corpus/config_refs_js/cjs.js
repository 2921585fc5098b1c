const a = require('./hooks/pnpm.js');
const b = require.resolve(`./g.cjs`);
module.exports = require(name);
import('./x').then(() => 0);
export * from 'x/sub';
