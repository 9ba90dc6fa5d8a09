import { describe, expect, it } from 'vitest';
import { Rng } from './random.js';

// Seeded specs trust a seed to replay their run; the generator must keep that promise.
describe('Rng', () => {
  it('replays the same draws for the same seed, and others for another', () => {
    const draws = (seed: number) => {
      const r = new Rng(seed);
      return [r.next(), r.int(0, 1000), r.pick(['x', 'y', 'z']), r.weighted({ a: 1, b: 5 }), r.chance(0.5), r.fork().next()];
    };
    expect(draws(42)).toEqual(draws(42));
    expect(draws(42)).not.toEqual(draws(43));
  });

  it('draws within the bounds it is given', () => {
    const r = new Rng(7);
    for (let i = 0; i < 1000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      const n = r.int(-2, 2);
      expect(Number.isInteger(n) && n >= -2 && n <= 2).toBe(true);
    }
    expect(new Set(Array.from({ length: 200 }, () => r.int(-2, 2)))).toEqual(new Set([-2, -1, 0, 1, 2]));
  });

  it('refuses a seed that cannot replay, and a pick from nothing', () => {
    expect(() => new Rng(-1)).toThrow(TypeError);
    expect(() => new Rng(1.5)).toThrow(TypeError);
    expect(() => new Rng(1).pick([])).toThrow(RangeError);
  });
});
