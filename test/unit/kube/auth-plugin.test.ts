// auth-provider kubeconfig users need @kubernetes/client-node, which the image leaves out (exec users
// do not: exec-credential.ts runs their plugin):
// without it the user fails at load with an error that says how to add it (the module itself is
// stood in for by the resolver; test/container shows the image has no client-node).
//   node --import tsx --test test/unit/kube/auth-plugin.test.ts
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLIENT_NODE, pluginAuth } from '../../../src/kube/auth.ts';

describe('pluginAuth', () => {
  it('without client-node: an auth-provider user fails at once, naming the package, the version and the fix', () => {
    const missing = (s: string) => s !== CLIENT_NODE;
    assert.throws(
      () => pluginAuth('https://x', { name: 'gke', authProvider: { name: 'gcp' } }, missing),
      (err: Error) =>
        /kubeconfig user "gke" uses auth-provider, which needs @kubernetes\/client-node; it is not installed/.test(
          err.message,
        ) && /npm install @kubernetes\/client-node@2\.0\.1/.test(err.message),
    );
  });

  it('control: with client-node installed (as in a development checkout) the user is accepted', () => {
    assert.equal(typeof pluginAuth('https://x', { name: 'gke', authProvider: { name: 'gcp' } }), 'function');
  });
});
