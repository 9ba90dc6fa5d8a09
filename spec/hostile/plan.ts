import { Rng } from '../helpers/random.js';

/** What a request asked for, as the hostile server tells them apart. */
export type Target = 'list' | 'watch' | 'write';

/** One hostile answer the server gives a request of its target, with the parameters the seed drew for it. */
export interface Behaviour {
  readonly kind: BehaviourKind;
  readonly target: Target;
  readonly params: Readonly<Record<string, string | number>>;
}

/** The behaviours the server draws from; `correct` interleaves right answers with the hostile ones. */
export const BEHAVIOUR_KINDS = [
  'correct',
  'encoding',
  'gzip-bomb',
  'endless-body',
  'trickle',
  'long-line',
  'big-header',
  'deep-nesting',
  'wrong-types',
  'escapes',
  'retry-after',
  'reset-mid-frame',
  'hostile-error',
] as const;
export type BehaviourKind = (typeof BEHAVIOUR_KINDS)[number];

/** Which behaviours make sense for which target (a write answer is one JSON object, never a stream). */
const FOR_TARGET: Readonly<Record<Target, readonly BehaviourKind[]>> = {
  list: BEHAVIOUR_KINDS,
  watch: BEHAVIOUR_KINDS,
  write: ['correct', 'encoding', 'gzip-bomb', 'big-header', 'deep-nesting', 'wrong-types', 'escapes', 'retry-after', 'reset-mid-frame', 'hostile-error'],
};

export const ENCODINGS = ['br', 'zstd', 'compress', 'gzip, gzip', 'gzip, identity', 'x-bogus', 'gzip-but-garbage', 'deflate-but-gzip'] as const;
export const RETRY_AFTERS = ['0', '86400', '3000000', '-5', 'soon', '1.5', 'Wed, 21 Oct 2015 07:28:00 GMT', 'Fri, 01 Jan 2100 00:00:00 GMT', '99999999999999999999'] as const;
export const WRONG_TYPES = ['items-object', 'items-scalars', 'metadata-string', 'rv-number', 'name-number', 'labels-array', 'event-type-number', 'event-object-string', 'body-array', 'null-body'] as const;
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 410, 422, 429, 500, 502, 503, 504] as const;
export const ERROR_BODIES = ['html', 'escapes', 'huge', 'status-wrong-types', 'invalid-utf8', 'echo-credential', 'empty'] as const;

/** Everything a seed decides before it starts: the hostile answers per target, and the server's own writes. */
export interface Plan {
  readonly seed: number;
  readonly behaviours: readonly Behaviour[];
  /** Objects the server holds before the informer starts. */
  readonly initialObjects: number;
  /** Writes the server makes to its own objects during the hostile phase, and their pace. */
  readonly writes: number;
  readonly writeEveryMs: number;
  /** Whether the server's own writes put a 10,000-deep spec and escape-laden annotations into real objects. */
  readonly hostileObjects: boolean;
  /** The seed of the server's workload (which object each write touches, and how). */
  readonly workloadSeed: number;
}

function params(kind: BehaviourKind, target: Target, rng: Rng): Record<string, string | number> {
  switch (kind) {
    case 'encoding':
      return { encoding: rng.pick(ENCODINGS), status: rng.chance(0.2) ? 403 : 200 };
    case 'gzip-bomb':
      // Inflates to 256 MiB per block: from 256 MiB to 2 GiB of whitespace.
      return { blocks: rng.int(1, 8) };
    case 'endless-body':
      return { shape: target === 'watch' ? rng.pick(['events', 'whitespace']) : rng.pick(['items', 'whitespace']) };
    case 'trickle':
      return { everyMs: rng.int(300, 700), headersFirst: rng.chance(0.8) ? 1 : 0 };
    case 'long-line':
      return { mib: rng.pick([8, 32, 100]) };
    case 'big-header':
      return { kib: rng.pick([17, 64, 512, 2048]), many: rng.chance(0.3) ? 1 : 0 };
    case 'deep-nesting':
      return { depth: rng.pick([100, 1000, 4500, 10_000]), shape: rng.pick(['array', 'object']) };
    case 'wrong-types':
      return { variant: rng.pick(WRONG_TYPES) };
    case 'escapes':
      return { where: rng.pick(['name', 'annotation', 'status-message', 'error-event']) };
    case 'retry-after':
      return { status: rng.pick([429, 503]), value: rng.pick(RETRY_AFTERS) };
    case 'reset-mid-frame':
      return { at: rng.pick(['before-headers', 'after-headers', 'mid-json', 'mid-chunk-size']) };
    case 'hostile-error':
      return { status: rng.pick(ERROR_STATUSES), body: rng.pick(ERROR_BODIES) };
    case 'correct':
      return {};
  }
}

/** Draws a seed's plan: 8–16 answers spread over lists, watches and writes, about a third of them correct. */
export function drawPlan(seed: number): Plan {
  const rng = new Rng(seed);
  const pick = rng.fork();
  const behaviours: Behaviour[] = [];
  const n = rng.int(8, 16);
  for (let i = 0; i < n; i++) {
    const target = pick.weighted<Target>({ list: 3, watch: 4, write: 2 });
    const kind = pick.chance(0.3) ? 'correct' : pick.pick(FOR_TARGET[target].filter((k) => k !== 'correct'));
    behaviours.push({ kind, target, params: params(kind, target, pick) });
  }
  return {
    seed,
    behaviours,
    initialObjects: rng.int(5, 40),
    writes: rng.int(20, 60),
    writeEveryMs: rng.int(20, 80),
    hostileObjects: rng.chance(0.5),
    workloadSeed: Math.floor(rng.next() * 2 ** 31),
  };
}

/** One line per behaviour, for reports: `watch trickle everyMs=412 headersFirst=1`. */
export function describeBehaviour(b: Behaviour): string {
  const ps = Object.entries(b.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return [b.target, b.kind, ...ps].join(' ');
}
