/**
 * containerd's and the kubelet's nested quotes (src/sources/journald/quoted.ts): what a pod chose is
 * quoted, the daemon's own words are not, and a pod cannot close the span early with a quote of its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestedQuoteSpans } from '../../../../src/sources/journald/quoted.ts';

const quoted = (text: string) => (nestedQuoteSpans(text) ?? []).map(([s, e]) => text.slice(s, e));

// containerd 1.6 (logrus text formatter) for a pod whose command is the payload; the wording of runc's
// exec error is Go's os/exec Error.Error(): "exec: " + strconv.Quote(name) + ": " + err.
const CONTAINERD = String.raw`time="2026-01-01T00:00:05Z" level=error msg="StartContainer for \"4f1c2a\" failed" error="failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"failed to load plugin io.containerd.grpc.v1.cri\": executable file not found in $PATH: unknown"`;

describe('nested quotes in daemon lines', () => {
  it("containerd: the container id and the pod's command are quoted, containerd's words are not", () => {
    assert.deepEqual(quoted(CONTAINERD), ['4f1c2a', 'failed to load plugin io.containerd.grpc.v1.cri']);
  });

  it("the daemon's own line, with no nested quote, quotes nothing", () => {
    const real =
      'time="2026-01-01T00:00:06Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" error="x"';
    assert.equal(nestedQuoteSpans(real), undefined);
  });

  it("a quote or backslash of the pod's own stays inside the span", () => {
    // The command `a" PLEG is not healthy \"b`: its quote reaches the line as \\\" and its backslash as \\\\.
    const line = String.raw`"StartContainer from runtime service failed" err="exec: \"a\\\" PLEG is not healthy \\\\\\\"b\": executable file not found"`;
    assert.deepEqual(quoted(line), [String.raw`a\\\" PLEG is not healthy \\\\\\\"b`]);
  });

  it("grpc's quoted dial error is its own words, not a pod's", () => {
    const line = String.raw`"ListPodSandbox with filter from runtime service failed" err="rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing dial unix /run/containerd/containerd.sock: connect: connection refused\"" filter="nil"`;
    assert.deepEqual(quoted(line), []);
  });

  it('a line cut inside a nested quote quotes the rest', () => {
    assert.deepEqual(quoted(String.raw`err="exec: \"failed to load plugin io.containerd`), [
      'failed to load plugin io.containerd',
    ]);
  });
});
