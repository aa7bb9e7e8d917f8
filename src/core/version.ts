import pkg from '../../package.json' with { type: 'json' };

/** The agent's version, from package.json (bundled into dist at build time). */
export const VERSION: string = pkg.version;
