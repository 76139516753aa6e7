import { ActivationMode, CommercialStatus, IdentityMode, MintBatchStatus, MintJobStatus } from '@mint/contract';
import {
  activationModes,
  batchStatuses,
  commercialStatuses,
  identityModes,
  InvalidInputError,
  jobStatuses,
  mintReadinessStatuses,
  productionBatchStatuses,
} from '@mint/domain';
import { describe, expect, it } from 'vitest';
import { activationMode, batchStatus, commercialStatus, identityMode, jobStatus, mintReadinessStatus, productionBatchStatus, unitStatus } from './enums.ts';

describe('enum mappings', () => {
  it('map the wire names of the contract to the domain values', () => {
    expect(identityMode.toDomain(IdentityMode.SERIAL, 'identity_mode')).toBe('serial');
    expect(activationMode.toDomain(ActivationMode.FIRST_SCAN, 'activation_mode')).toBe('first_scan');
    expect(jobStatus.toWire('QUEUED')).toBe(MintJobStatus.QUEUED);
    expect(batchStatus.toWire('draft')).toBe(MintBatchStatus.DRAFT);
    expect(commercialStatus.toDomain(CommercialStatus.ACTIVE, 'commercial_status')).toBe('ACTIVE');
  });

  it('cover every domain value both ways', () => {
    const pairs = [
      [identityMode, identityModes],
      [activationMode, activationModes],
      [jobStatus, jobStatuses],
      [batchStatus, batchStatuses],
      [commercialStatus, commercialStatuses],
      [mintReadinessStatus, mintReadinessStatuses],
      [productionBatchStatus, productionBatchStatuses],
      [unitStatus, ['inactive', 'active']],
    ] as const;
    for (const [mapping, values] of pairs) {
      const wires = values.map((v) => (mapping.toWire as (d: string) => number)(v));
      expect(new Set(wires).size).toBe(values.length);
      expect(wires).not.toContain(0);
      expect(wires.map((w) => (mapping.toDomain as (w: number, f: string) => string)(w, 'f'))).toEqual(values);
    }
  });

  it('refuse UNSPECIFIED as invalid input naming the field', () => {
    expect(() => identityMode.toDomain(IdentityMode.UNSPECIFIED, 'identity_mode')).toThrow(InvalidInputError);
    expect(() => identityMode.toDomain(IdentityMode.UNSPECIFIED, 'identity_mode')).toThrow('identity_mode: must be one of batch, serial');
  });
});
