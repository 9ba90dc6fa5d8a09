/**
 * The timing the chaos suite runs with. The simulator and the informer are
 * scaled down from production (bookmarks every 250 ms instead of a minute,
 * watches of 2–4 s instead of 5–10 min, a 3 s idle timeout instead of two
 * minutes) so a seed lasts seconds; the reflector's retry policy is its
 * default. Every figure printed is measured against these settings.
 */
export const CHAOS = Object.freeze({
  /** Keys the workload draws from: NAMESPACES × NAMES_PER_NAMESPACE. */
  namespaces: Object.freeze(['default', 'team-a', 'team-b', 'team-c']),
  namesPerNamespace: 250,
  /** Objects live before the informers start. */
  initialObjects: 500,
  /** The second informer's selector, and the same rule written out for the expected state. */
  labelSelector: 'tier in (web,api)',
  selectorTiers: Object.freeze(['web', 'api']),
  tiers: Object.freeze(['web', 'api', 'db']),
  /** Workload operations during the chaos phase, and how long it lasts. */
  minOps: 200,
  maxOps: 400,
  chaosMs: 1000,
  /** Faults injected during the chaos phase. */
  minFaults: 3,
  maxFaults: 8,
  /** Writes after the measured fault, so the informers need what came after it. */
  tailWrites: 20,
  /** Steady writes before a stall probe, so the reflector has learnt the watches' rhythm. */
  warmupMs: 3000,
  /** How long an armed fault may wait to be taken (writes nudge it) before it is disarmed. */
  takeTimeoutMs: 2000,
  /** The simulator's bookmark period. */
  bookmarkIntervalMs: 250,
  /** A write to another resource this often, as a busy cluster's etcd moves on, so bookmarks keep flowing. */
  heartbeatMs: 100,
  /** kubeSource: a request silent this long ends (the stall-detection fallback). */
  idleTimeoutMs: 3000,
  /** reflect(): watches of [2, 4) s. */
  minWatchTimeoutSeconds: 2,
  /** reflect(): stall detection by rhythm. */
  stallDetection: Object.freeze({ missedBeats: 4, minMs: 1000 }),
  /** Handlers' buffers. */
  dropOldestLimit: 16,
  errorLimit: 100_000,
  /** The target: converged within this of the last fault (plus the stall-detection time for stalls). */
  targetMs: 5000,
  /** What a CI run asserts, generous so the suite is not flaky on a loaded machine. */
  ciBoundMs: 30_000,
  /** How long a seed may take to tear down (sockets closed, watches gone). */
  teardownMs: 10_000,
});

/** The longest a stall can go unnoticed with these settings: the source's idle timeout bounds the rhythm's deadline. */
export const STALL_DETECTION_MS = CHAOS.idleTimeoutMs;
