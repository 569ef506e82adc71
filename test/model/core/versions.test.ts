import { describe, expect, test } from '@jest/globals';
import { atLeastMinor, kubernetesMinor } from '../../../src/model/core/versions.js';

describe('Kubernetes versions', () => {
  test('GIVEN what servers and users write THEN major.minor, and nothing for what is not a version', () => {
    expect(kubernetesMinor('v1.29.5+rhcos')).toBe('1.29');
    expect(kubernetesMinor('v1.30.2-eks-1552ad0')).toBe('1.30');
    expect(kubernetesMinor('1.28')).toBe('1.28');
    expect(kubernetesMinor(' v1.31 ')).toBe('1.31');
    expect(kubernetesMinor('1.09.1')).toBe('1.9');
    for (const bad of ['latest', '1', 'v1.x', '4.17 (OpenShift)', '']) expect(kubernetesMinor(bad)).toBeUndefined();
  });

  test('GIVEN two minors THEN they compare as numbers, not as text', () => {
    expect(atLeastMinor('1.30', '1.30')).toBe(true);
    expect(atLeastMinor('1.29', '1.30')).toBe(false);
    expect(atLeastMinor('1.100', '1.30')).toBe(true);
    expect(atLeastMinor('2.0', '1.30')).toBe(true);
    expect(atLeastMinor('1.9', '1.30')).toBe(false);
  });
});
