import { describe, expect, it } from 'vitest';
import { sessionFromFragment } from './session.ts';

describe('sessionFromFragment', () => {
  it('reads the token and the brand of a sign-in link', () => {
    expect(sessionFromFragment('#token=eyJ.a.b&brand=73a20731-07d5-4830-84cc-2856e7a38b18')).toEqual({
      token: 'eyJ.a.b',
      brandId: '73a20731-07d5-4830-84cc-2856e7a38b18',
    });
  });

  it('leaves the brand to be picked when the link has none', () => {
    expect(sessionFromFragment('#token=eyJ.a.b')).toEqual({ token: 'eyJ.a.b', brandId: null });
    expect(sessionFromFragment('#token=eyJ.a.b&brand=')).toEqual({ token: 'eyJ.a.b', brandId: null });
  });

  it('finds no session in a route fragment or an empty token', () => {
    expect(sessionFromFragment('#/batches/abc')).toBeNull();
    expect(sessionFromFragment('')).toBeNull();
    expect(sessionFromFragment('#token=')).toBeNull();
  });
});
