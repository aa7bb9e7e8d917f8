import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redact } from '../../../src/diagnostics/redact.ts';

describe('redact', () => {
  const cases: [string, string][] = [
    ['Authorization: Bearer abc.def-123', 'Authorization: Bearer [REDACTED]'],
    ['"Authorization":"Basic dXNlcjpwYXNz"', '"Authorization":"Basic [REDACTED]"'],
    ['proxy-authorization=xyz', 'proxy-authorization=[REDACTED]'],
    ['curl -H bearer AbCdEfGh12345678', 'curl -H bearer [REDACTED]'],
    ['mount -o username=u,password=s3cr3t', 'mount -o username=u,password=[REDACTED]'],
    ['--token=abc --client_secret: def', '--token=[REDACTED] --client_secret: [REDACTED]'],
    ['jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0.sig-part', 'jwt [REDACTED]'],
    [
      'PUT /b?X-Amz-Credential=AK%2F&X-Amz-Signature=f00d',
      'PUT /b?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]',
    ],
  ];
  for (const [input, want] of cases)
    it(`masks ${input.slice(0, 30)}`, () => assert.equal(redact(input), want));

  it('leaves look-alikes alone', () => {
    for (const benign of [
      'kubelet: tokens processed 5',
      'EXT4-fs (sda1): mounted filesystem with ordered data mode',
      'authorization mode is Node,RBAC',
      'Bearer of bad news',
    ])
      assert.equal(redact(benign), benign);
  });
});
