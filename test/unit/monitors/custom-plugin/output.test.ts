import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CappedCapture,
  dropPartialTail,
  processState,
} from '../../../../src/monitors/custom-plugin/output.ts';

describe('plugin output handling', () => {
  it('keeps only the first bytes of a pipe and notes the overflow', () => {
    const capture = new CappedCapture(10);
    capture.write(Buffer.from('12345'));
    assert.equal(capture.overflowed, false);
    capture.write(Buffer.from('67890abc'));
    capture.write(Buffer.alloc(1 << 20, 'z'));
    assert.equal(capture.bytes().toString(), '1234567890');
    assert.equal(capture.overflowed, true);
  });

  it('drops a character the capture cap cut in half', () => {
    const capture = new CappedCapture(4);
    capture.write(Buffer.from('ab€'));
    assert.equal(capture.bytes().length, 4);
    assert.equal(capture.text(), 'ab');
    const whole = new CappedCapture(5);
    whole.write(Buffer.from('ab€cd'));
    assert.equal(whole.text(), 'ab€');
  });

  it('drops only an incomplete trailing sequence', () => {
    const full = Buffer.from('a😀');
    assert.equal(dropPartialTail(full).toString(), 'a😀');
    for (let n = 2; n < full.length; n++) assert.equal(dropPartialTail(full.subarray(0, n)).toString(), 'a');
    assert.equal(dropPartialTail(Buffer.alloc(0)).length, 0);
  });

  it("spells process states like Go's ProcessState.String()", () => {
    assert.equal(processState({ code: 0, signal: null }), 'exit status 0');
    assert.equal(processState({ code: 3, signal: null }), 'exit status 3');
    assert.equal(processState({ code: null, signal: 'SIGKILL' }), 'signal: killed');
    assert.equal(processState({ code: null, signal: 'SIGTERM' }), 'signal: terminated');
    assert.equal(processState({ code: null, signal: 'SIGWINCH' }), 'signal: SIGWINCH');
    assert.equal(processState(undefined), '<nil>');
  });
});
