import { describe, expect, it } from 'vitest';
import { sidecarSetHashDocument } from './sidecarSetHash.js';

describe('SidecarSet hash document (v1.9 fields)', () => {
  it('writes shareVolumeDevicePolicy and resourcesPolicy where Go declares them, and nothing when unset', () => {
    const policy = {
      targetContainersMode: 'sum',
      targetContainersNameRegex: '.*',
      resourcesExpr: { limits: { cpu: 'cpu' } },
    };
    const doc = sidecarSetHashDocument(
      [
        {
          name: 'a',
          shareVolumePolicy: { type: 'disabled' },
          shareVolumeDevicePolicy: { type: 'enabled' },
          transferEnv: [{ envName: 'X' }],
          resourcesPolicy: policy,
        },
      ],
      [],
    );
    expect(doc).toContain(
      '"shareVolumePolicy":{"type":"disabled"},"shareVolumeDevicePolicy":{"type":"enabled"},"transferEnv":[{"envName":"X"}],' +
        '"resourcesPolicy":{"targetContainersMode":"sum","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu"}}}}',
    );
    expect(sidecarSetHashDocument([{ name: 'a' }], [])).toBe(
      '{"containers":[{"name":"a","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}',
    );
  });
});
