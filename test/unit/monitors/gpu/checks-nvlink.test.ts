import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Answer, NVML } from '../../../../src/host/nvml/api.ts';
import {
  NVLINK_DEFAULTS,
  NVML_NVLINK_MAX_LINKS,
  type NvlinkState,
  nvlinkCheck,
  nvlinkOptions,
} from '../../../../src/monitors/gpu/checks/nvlink.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

/** A GPU with `count` links (an H100 SXM has 18): the rest answer INVALID_ARGUMENT, as past the last link. */
function links(count: number, inactive: readonly number[] = []) {
  const asked: number[] = [];
  const nvml = stubNvml({
    nvLinkActive: (_d, link): Answer<boolean> => {
      asked.push(link);
      if (link >= count) return nvmlError('nvmlDeviceGetNvLinkState', NVML.INVALID_ARGUMENT);
      return !inactive.includes(link);
    },
  });
  return { nvml, asked };
}

function poll(nvml: ReturnType<typeof links>['nvml'], state?: NvlinkState, options = NVLINK_DEFAULTS) {
  return runCheck(nvlinkCheck, nvml, options, state ?? nvlinkCheck.initialState());
}

describe('GPU check nvlink', () => {
  it('a PCIe H200 answers NOT_SUPPORTED on every link: no links, no finding, no error', () => {
    const asked: number[] = [];
    const nvml = stubNvml({
      nvLinkActive: (_d, link) => {
        asked.push(link);
        return nvmlError('nvmlDeviceGetNvLinkState', NVML.NOT_SUPPORTED);
      },
    });
    const r = poll(nvml);
    assert.deepEqual(r, { findings: [], gauges: { nvlink_links_active: 0, nvlink_links_inactive: 0 } });
    assert.equal(asked.length, NVML_NVLINK_MAX_LINKS, 'every link id is asked');
  });

  it('asks a link that answered NOT_SUPPORTED or INVALID_ARGUMENT only once; links that exist every poll', () => {
    const { nvml, asked } = links(18);
    const state = nvlinkCheck.initialState();
    poll(nvml, state);
    assert.equal(asked.length, NVML_NVLINK_MAX_LINKS, 'the first poll asks every link id');
    asked.length = 0;
    const again = poll(nvml, state);
    assert.deepEqual(asked, [...Array(18).keys()], 'later polls ask only the 18 links that exist');
    assert.deepEqual(again.gauges, { nvlink_links_active: 18, nvlink_links_inactive: 0 });
  });

  it('one link inactive while the other 17 are active is fatal NvidiaNVLinkError naming the link', () => {
    const r = poll(links(18, [5]).nvml);
    assert.deepEqual(
      r.findings.map((f) => [f.severity, f.reason]),
      [['fatal', 'NvidiaNVLinkError']],
    );
    const message = r.findings[0]?.message ?? '';
    assert.ok(
      namesTheGpu(message) && message.includes('link 5 inactive while 17 others are active'),
      message,
    );
    assert.deepEqual(r.gauges, { nvlink_links_active: 17, nvlink_links_inactive: 1 });
    assert.deepEqual(poll(links(18).nvml).findings, [], 'control: all 18 active');
  });

  it('links seen active that all go inactive are fatal; all inactive from the start (MIG, untrained) is not', () => {
    const state = nvlinkCheck.initialState();
    assert.deepEqual(poll(links(18).nvml, state).findings, []);
    const all = Array.from({ length: 18 }, (_, i) => i);
    const down = poll(links(18, all).nvml, state);
    assert.equal(down.findings.length, 1);
    assert.ok(down.findings[0]?.message.includes('links 0, 1, 2'));
    assert.ok(down.findings[0]?.message.includes('went inactive after being active'));
    assert.deepEqual(poll(links(18, all).nvml).findings, [], 'control: never seen active');
  });

  it('a link that comes back clears the finding', () => {
    const state = nvlinkCheck.initialState();
    poll(links(4).nvml, state);
    assert.equal(poll(links(4, [2]).nvml, state).findings.length, 1);
    assert.deepEqual(poll(links(4).nvml, state).findings, []);
  });

  it('INVALID_ARGUMENT past the last link is no link; the count of links asked stays NVML_NVLINK_MAX_LINKS', () => {
    const { nvml, asked } = links(12);
    const r = poll(nvml);
    assert.deepEqual(r.gauges, { nvlink_links_active: 12, nvlink_links_inactive: 0 });
    assert.equal(asked.length, 36);
  });

  it('downAmongActive: false turns the beside-active shape off; went-inactive still fires', () => {
    const off = nvlinkOptions.parse({ downAmongActive: false });
    assert.deepEqual(poll(links(18, [5]).nvml, undefined, off).findings, []);
    const state = nvlinkCheck.initialState();
    poll(links(18).nvml, state, off);
    assert.equal(poll(links(18, [5]).nvml, state, off).findings.length, 1);
  });

  it('GPU_IS_LOST or an unknown error on any link is the error', () => {
    for (const code of [NVML.GPU_IS_LOST, NVML.UNKNOWN]) {
      const err = nvmlError('nvmlDeviceGetNvLinkState', code);
      const nvml = stubNvml({ nvLinkActive: (_d, link) => (link === 3 ? err : true) });
      const r = poll(nvml);
      assert.equal(r.error, err);
      assert.deepEqual(r.findings, []);
    }
  });

  it('options: both shapes on by default; an unknown key is refused', () => {
    assert.deepEqual(NVLINK_DEFAULTS, { downAfterActive: true, downAmongActive: true });
    assert.equal(nvlinkOptions.safeParse({ links: 18 }).success, false);
  });
});
