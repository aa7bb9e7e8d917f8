import pkg from '../../package.json' with { type: 'json' };

// Defined by test/tools/build.ts (esbuild `define`); absent when running from source.
declare const __NPD_GIT_COMMIT__: string | undefined;
declare const __NPD_BUILD_DATE__: string | undefined;

/** The agent's version, from package.json (bundled into dist at build time). */
export const VERSION: string = pkg.version;

/** The commit and date the bundle was built from ("unknown" when run from source). */
export const GIT_COMMIT: string = typeof __NPD_GIT_COMMIT__ === 'string' ? __NPD_GIT_COMMIT__ : 'unknown';
export const BUILD_DATE: string = typeof __NPD_BUILD_DATE__ === 'string' ? __NPD_BUILD_DATE__ : 'unknown';

/** What --version prints; NPD prints its `git describe` version. */
export const VERSION_LINE = `node-problem-detector ${VERSION} (commit ${GIT_COMMIT}, built ${BUILD_DATE})`;

/** The client-node release the agent is tested with, named when an exec kubeconfig needs it. */
export const CLIENT_NODE_VERSION: string = pkg.dependencies['@kubernetes/client-node'];
