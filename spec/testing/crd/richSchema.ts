import type { StructuralSchemaInput } from '../../../src/testing/crd/schema/index.js';

/** One structural schema using every construct the engine supports, shared by the unit and e2e specs. */
export const RICH_SCHEMA: StructuralSchemaInput = {
  type: 'object',
  'x-kubernetes-validations': [{ rule: '!has(self.spec.step) || self.spec.step < 100', message: 'step must stay below 100' }],
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 12 } } },
    spec: {
      type: 'object',
      required: ['image'],
      'x-kubernetes-validations': [{ rule: 'self.minReplicas <= self.replicas', message: 'minReplicas must not exceed replicas' }],
      properties: {
        image: { type: 'string', minLength: 1, maxLength: 20, pattern: '^[a-z0-9./:é-]+$' },
        replicas: { type: 'integer', minimum: 0, maximum: 50, default: 1 },
        minReplicas: { type: 'integer', default: 0 },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1 },
        step: { type: 'integer', multipleOf: 5 },
        mode: { type: 'string', enum: ['Fast', 'Slow'], default: 'Slow' },
        ip: { type: 'string', format: 'ipv4' },
        created: {
          type: 'string',
          format: 'date-time',
          'x-kubernetes-validations': [{ rule: "self > timestamp('2000-01-01T00:00:00Z')", message: 'must be in this millennium' }],
        },
        timeout: { type: 'string', format: 'duration', 'x-kubernetes-validations': [{ rule: "self <= duration('1h')", message: 'at most an hour' }] },
        id: { type: 'string', format: 'uuid' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set', maxItems: 3 },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer' } },
            'x-kubernetes-validations': [{ rule: '!has(self.port) || !has(oldSelf.port) || self.port >= oldSelf.port', message: 'port may only grow' }],
          },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 },
        nested: {
          type: 'object',
          default: {},
          properties: { a: { type: 'object', default: {}, properties: { b: { type: 'string', default: 'x' } } } },
        },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        nullableNum: { type: 'integer', nullable: true },
        nonNullDefault: { type: 'string', default: 'd' },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        name: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: "self.startsWith('n')", messageExpression: "'name ' + self + ' must start with n'" }],
        },
        immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'is immutable' }] },
        limits: {
          type: 'object',
          properties: { low: { type: 'integer' }, high: { type: 'integer' } },
          'x-kubernetes-validations': [
            { rule: 'self.low <= self.high', fieldPath: '.low', reason: 'FieldValueForbidden', message: 'low must not exceed high' },
          ],
        },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

/** allOf, anyOf, oneOf and not, as structural schemas allow them (constraining specified fields only). */
export const COMPOSITE_SCHEMA: StructuralSchemaInput = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      oneOf: [{ required: ['a'] }, { required: ['b'] }],
      properties: {
        a: { type: 'integer' },
        b: { type: 'string' },
        x: { type: 'integer', not: { enum: [13] } },
        y: { type: 'string', anyOf: [{ maxLength: 2 }, { pattern: '^z' }] },
        z: { type: 'integer', allOf: [{ minimum: 1 }, { maximum: 5 }] },
        e: { type: 'string', nullable: true, enum: ['on', 'off'] },
      },
    },
  },
};

/** Schemas kube-apiserver refuses in a CRD, each for one reason. */
export const NOT_STRUCTURAL: readonly (readonly [string, StructuralSchemaInput])[] = [
  ['fields without a type', { type: 'object', properties: { spec: { properties: { a: {} } } } }],
  ['an array without items', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'array' } } } } }],
  ['a type inside anyOf', { type: 'object', properties: { spec: { type: 'object', anyOf: [{ type: 'object' }] } } }],
  ['metadata beyond name', { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }],
  ['a default of the wrong type', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'integer', default: 'x' } } } } }],
  ['a default with unknown fields', { type: 'object', properties: { spec: { type: 'object', default: { b: 1 }, properties: { a: { type: 'integer' } } } } }],
  ['an invalid pattern', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } } }],
  ['a root that is not an object', { type: 'string' }],
  ['properties beside additionalProperties', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } } }],
  ['uniqueItems', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, uniqueItems: true } } } } }],
  ['a list type on a string', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', 'x-kubernetes-list-type': 'set' } } } } }],
  ['a map list whose key is optional', {
    type: 'object',
    properties: { spec: { type: 'object', properties: { a: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k', 'z'], items: { type: 'object', properties: { k: { type: 'string' } } } } } } },
  }],
  ['list-map-keys without a map list', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'array', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } } } } } } } }],
  ['nullable set items', { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', nullable: true } } } } } }],
  ['an embedded resource with no fields', { type: 'object', properties: { spec: { type: 'object', properties: { t: { type: 'object', 'x-kubernetes-embedded-resource': true } } } } }],
];
