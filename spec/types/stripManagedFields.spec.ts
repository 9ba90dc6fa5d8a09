import { describe, expectTypeOf, it } from 'vitest';
import type { InformerOptions } from '../../src/index.js';
import type { ListOptions, ReflectOptions } from '../../src/core.js';
import type { WatchOptions } from '../../src/sources/types.js';

// Checked by `tsc`: leaving out managedFields has one option name wherever it is asked for.

describe('one name for leaving out managedFields', () => {
  it('is stripManagedFields on the informer, the reflector and the list and watch requests', () => {
    expectTypeOf<InformerOptions<unknown>>().toHaveProperty('stripManagedFields');
    expectTypeOf<ReflectOptions>().toHaveProperty('stripManagedFields');
    expectTypeOf<ListOptions>().toHaveProperty('stripManagedFields');
    expectTypeOf<WatchOptions>().toHaveProperty('stripManagedFields');
    // @ts-expect-error the old name is gone
    expectTypeOf<ReflectOptions>().toHaveProperty('dropManagedFields');
    // @ts-expect-error the old name is gone
    expectTypeOf<ListOptions>().toHaveProperty('dropManagedFields');
    // @ts-expect-error the old name is gone
    expectTypeOf<WatchOptions>().toHaveProperty('dropManagedFields');
  });
});
