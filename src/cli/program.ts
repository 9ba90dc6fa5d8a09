/**
 * The command line: `rxkube watch`, `rxkube crd`, `rxkube manifests`, `rxkube simulator` and `rxkube demo`, their flags and help,
 * parsed by commander. Every flag is declared here, so `--help` names them
 * all and a misspelt one is an error (with a suggestion), never ignored.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { crdCommand } from './crdCommands.js';
import { manifestText } from './crdManifest.js';
import { manifestsOf, type ManifestsFlags } from './manifests.js';
import { parseDuration } from './parseDuration.js';
import { runDemo } from './demo.js';
import { runSimulatorCommand, type SimulatorCommandFlags } from './simulator.js';
import { act } from './usage.js';
import { runWatch } from './watch.js';
import type { WatchFlags } from './watchFlags.js';
import { writeText } from './terminal.js';


/** A non-negative integer flag value. */
function parseCount(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
}

/** A non-negative number flag value. */
function parseRate(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative number, got ${JSON.stringify(text)}`);
  return n;
}

const WATCH_EXAMPLES = `
Resources: pods, deployments, svc, … (kubectl's names), v1/pods, apps/v1/deployments, example.com/v1/widgets,
and custom resources by kubectl's names (widgets, widget, its short name, widgets.example.com), through discovery.

Examples:
  rxkube watch pods -A --simulator          try it on the built-in API-server simulator
  rxkube watch deploy -n prod               a live table of one namespace's deployments
  rxkube watch pods -l app=web -o json      one JSON line per add/update/delete, for scripts
  rxkube watch nodes --once                 print the synced cache and exit
  rxkube watch deploy -A --context eu --context us   two clusters in one table, with a CLUSTER column

On a terminal the view is redrawn in place; in a pipe it prints the table once
synced, then one line per change (reflector changes go to stderr). NO_COLOR
turns colours off. Ctrl-C stops the informer and closes every connection.`;

/**
 * Builds the `rxkube` program. Actions set `process.exitCode`; a usage error
 * (unknown resource, bad selector, misspelt flag) is reported by commander
 * as `error: …` with exit code 1.
 *
 * @returns the program, ready for `parseAsync(process.argv)`.
 */
export function createProgram(): Command {
  const program = new Command('rxkube')
    .description('Kubernetes informers as RxJS streams: watch a resource through an informer, generate and install CRDs, print webhook manifests, or run the demo.')
    .version('0.1.0', '-V, --version')
    .showSuggestionAfterError()
    .allowExcessArguments(false);

  program
    .command('watch')
    .description('Watch a resource through an informer: a live table, JSON lines, or the synced cache once.')
    .argument('<resource>', 'what to watch: pods, deploy, v1/pods, apps/v1/deployments, example.com/v1/widgets, widgets.example.com, widgets')
    .option('-n, --namespace <namespace>', "only this namespace (default: the context's namespace, else default)")
    .option('-A, --all-namespaces', 'every namespace')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('--field-selector <selector>', 'field selector, e.g. status.phase=Running')
    .option('--context <name>', 'kubeconfig context to use (default: the current one); repeat it to watch several clusters, with a CLUSTER column', (name: string, all: string[] | undefined) => [...(all ?? []), name])
    .option('--all-contexts', 'watch every context of the kubeconfig, one cluster each, with a CLUSTER column')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .addOption(new Option('-o, --output <format>', 'table (live view) or json (one JSON line per event)').choices(['table', 'json']).default('table'))
    .option('--once', 'print the synced cache and exit')
    .addOption(new Option('--timeout <duration>', 'with --once: how long to wait for the sync').default(30_000, '30s').argParser(parseDuration))
    .addOption(new Option('--fifo <mode>', "the informer's queue: perKey (client-go's DeltaFIFO) or ordered (events in server order, each relist applied in one step)").choices(['perKey', 'ordered']).default('perKey'))
    .option('--simulator', 'run against the built-in API-server simulator, seeded and churning')
    .addOption(new Option('--objects <n>', 'with --simulator: objects to seed').default(300).argParser(parseCount))
    .addOption(new Option('--churn <per-second>', 'with --simulator: writes per second once synced').default(40).argParser(parseRate))
    .addOption(new Option('--seed <n>', 'with --simulator: seed of the churn').default(1).argParser(parseCount))
    .addHelpText('after', WATCH_EXAMPLES)
    .action(act((resource: string, flags: WatchFlags) => runWatch(resource, flags)));

  program.addCommand(crdCommand());

  program
    .command('manifests')
    .description("Print the webhook configurations that register the webhooks a module exports, and the CRDs of its custom resources, for 'kubectl apply -f -'.")
    .argument('<module>', 'a .ts, .mts, .js or .mjs module exporting admission webhooks and customResource() definitions')
    .option('--service <namespace/name[:port]>', 'kube-apiserver reaches the webhooks through this Service (port default 443)')
    .option('--url <https://host[:port]>', 'kube-apiserver reaches the webhooks at this URL; each path is appended')
    .option('--name <name>', 'metadata.name of the webhook configurations (default: the Service name, else rxkube-webhooks)')
    .option('--ca-bundle-file <file>', "PEM CA certificate(s) that signed the webhook server's certificate, written as caBundle")
    .addOption(new Option('-o, --output <format>', 'yaml (documents separated by ---) or json (a v1 List)').choices(['yaml', 'json']).default('yaml'))
    .addHelpText('after', MANIFESTS_EXAMPLES)
    .action(
      act(async (module: string, flags: ManifestsFlags) => {
        writeText(process.stdout, manifestText(await manifestsOf(module, flags), flags.output));
        return 0;
      }),
    );

  program
    .command('demo')
    .description('The simulator with churn and faults, a handler and the live view; ends with a check that the cache matched the server.')
    .addOption(new Option('--duration <duration>', 'how long the churn and faults run').default(30_000, '30s').argParser(parseDuration))
    .addOption(new Option('--rate <per-second>', 'pod writes per second').default(400).argParser(parseRate))
    .addHelpText('after', '\nOn a terminal the live view runs above the fault log; in a pipe, one status line per second.')
    .action(act((flags: { duration: number; rate: number }) => runDemo({ durationMs: flags.duration, perSecond: flags.rate })));

  program
    .command('simulator')
    .description("Run rxkube's API-server simulator as a process of its own, serving your CRDs, for manual tests with kubectl or a program.")
    .option('--crd <file>', 'a CRD file (.yaml, .yml or .json, several documents each) or a module (.ts, .mts, .js or .mjs) exporting custom-resource definitions; repeatable', (path: string, all: string[] | undefined) => [...(all ?? []), path])
    .option('--webhook-url <url>', "conversion webhook (https://…/convert) of the modules' definitions with converters; without it their CRDs convert nothing (strategy None)")
    .option('--ca-bundle-file <file>', 'the PEM CA the simulator trusts for --webhook-url')
    .option('--kubeconfig-out <path>', 'write a kubeconfig for the simulator there, for kubectl --kubeconfig or KUBECONFIG')
    .addOption(new Option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)').default(0).argParser(parseCount))
    .addHelpText('after', SIMULATOR_EXAMPLES)
    .action(act((flags: SimulatorCommandFlags) => runSimulatorCommand(flags)));

  return program;
}

const MANIFESTS_EXAMPLES = `
Examples:
  rxkube manifests ./src/webhooks.ts --service shop-system/shop-operator-webhooks | kubectl apply -f -
  rxkube manifests ./dist/webhooks.js --url https://127.0.0.1:9443 --ca-bundle-file ca.crt -o json

Webhooks keep their own paths (/validate-…, /mutate-…, /convert). A .ts module is imported through
Node's type stripping (Node >= 22.18).`;

const SIMULATOR_EXAMPLES = `
Examples:
  rxkube simulator --crd website.yaml --kubeconfig-out ./kubeconfig
  rxkube simulator --crd src/website.ts --kubeconfig-out ./kubeconfig   (a .ts module needs Node 22.18 or later)
  kubectl --kubeconfig ./kubeconfig get websites
  rxkube simulator --crd src/website.ts --webhook-url https://127.0.0.1:9443/convert --ca-bundle-file ca.crt

A definition with converters converts through --webhook-url (a running manager's
webhook server); without it its CRD is served with conversion None, and it says so.

It prints one line, "rxkube simulator ready at <url> …", once it serves; Ctrl-C stops it.`;
