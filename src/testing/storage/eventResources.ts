import { isRecord } from '../writes/objectRules.js';
import { toResourceType, type ResourceType } from './resources.js';
import { invalidFields, type FieldCause } from '../server/status.js';

// Events, served under both of their API groups. kube-apiserver keeps one store behind `v1` and
// `events.k8s.io/v1` and converts between them; here they are two stores (see the README).

/** kube-apiserver's limits on an events.k8s.io/v1 Event. */
const NOTE_LIMIT = 1024;
const NAME_LIMIT = 128;

/** `v1/events` and `events.k8s.io/v1/events`, with the field selectors kube-apiserver supports on each. */
export function eventResources(): ResourceType[] {
  return [
    toResourceType(
      {
        version: 'v1',
        plural: 'events',
        kind: 'Event',
        selectableFields: [
          'involvedObject.kind',
          'involvedObject.namespace',
          'involvedObject.name',
          'involvedObject.uid',
          'involvedObject.apiVersion',
          'involvedObject.resourceVersion',
          'involvedObject.fieldPath',
          'reason',
          'reportingComponent',
          'source',
          'type',
        ],
      },
      { builtIn: true },
    ),
    toResourceType(
      {
        group: 'events.k8s.io',
        version: 'v1',
        plural: 'events',
        kind: 'Event',
        selectableFields: [
          'regarding.kind',
          'regarding.namespace',
          'regarding.name',
          'regarding.uid',
          'regarding.apiVersion',
          'regarding.resourceVersion',
          'regarding.fieldPath',
          'reason',
          'reportingController',
          'type',
        ],
      },
      { builtIn: true, validate: validateEvent },
    ),
  ];
}

function text(obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The checks kube-apiserver makes of an Event written through
 * events.k8s.io/v1, in its order and wording (it validates the core form,
 * so the regarding object is `involvedObject`): the regarding object in the
 * event's namespace, a series of at least two, an `eventTime`; then, for an
 * event that has one, the fields a recorder must fill and their lengths;
 * the type; the note's size.
 */
export function validateEvent(obj: Record<string, unknown>): void {
  const causes: FieldCause[] = [];
  const meta = isRecord(obj['metadata']) ? obj['metadata'] : {};
  const regarding = isRecord(obj['regarding']) ? obj['regarding'] : {};
  const ns = typeof meta['namespace'] === 'string' ? meta['namespace'] : '';
  const regardingNs = typeof regarding['namespace'] === 'string' ? regarding['namespace'] : '';
  if (regardingNs === '' ? ns !== '' && ns !== 'default' : regardingNs !== ns) {
    causes.push({ reason: 'FieldValueInvalid', field: 'involvedObject.namespace', message: `Invalid value: ${JSON.stringify(regardingNs)}: does not match event.namespace` });
  }
  const series = obj['series'];
  if (series !== undefined && series !== null) {
    const count = isRecord(series) ? series['count'] : undefined;
    if (typeof count !== 'number' || count < 2) causes.push({ reason: 'FieldValueInvalid', field: 'series.count', message: 'Invalid value: "": should be at least 2' });
    if (!isRecord(series) || typeof series['lastObservedTime'] !== 'string' || series['lastObservedTime'] === '') {
      causes.push({ reason: 'FieldValueRequired', field: 'series.lastObservedTime', message: 'Required value' });
    }
  }
  if (text(obj, 'eventTime') === undefined) causes.push({ reason: 'FieldValueRequired', field: 'eventTime', message: 'Required value' });
  else {
    const required = (field: string, limit?: number): void => {
      const v = text(obj, field);
      if (v === undefined) causes.push({ reason: 'FieldValueRequired', field, message: 'Required value' });
      else if (limit !== undefined && v.length > limit) causes.push({ reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${limit} bytes` });
    };
    required('reportingController');
    required('reportingInstance', NAME_LIMIT);
    required('action', NAME_LIMIT);
    required('reason', NAME_LIMIT);
  }
  const type = obj['type'];
  if (type !== 'Normal' && type !== 'Warning') {
    causes.push({ reason: 'FieldValueInvalid', field: 'type', message: `Invalid value: "": has invalid value: ${String(type ?? '')}` });
  }
  const note = obj['note'];
  if (text(obj, 'eventTime') !== undefined && typeof note === 'string' && Buffer.byteLength(note) > NOTE_LIMIT) {
    causes.push({ reason: 'FieldValueTooLong', field: 'note', message: `Too long: may not be more than ${NOTE_LIMIT} bytes` });
  }
  if (causes.length > 0) throw invalidFields('', 'Event', causes, typeof meta['name'] === 'string' ? meta['name'] : '');
}
