/**
 * `rxkube crd generate | install | types`: the command group that turns a
 * module's custom-resource definitions into CRD manifests and installs them,
 * and turns a CRD someone else wrote into a TypeScript module.
 */
import { Command, Option } from 'commander';
import { writeFileSync } from 'node:fs';
import { loadCrdModule } from './crdExports.js';
import { crdsFrom, installCrds } from './crdInstall.js';
import { manifestText, orderCrd } from './crdManifest.js';
import { crdTypesInput } from './crdTypesInput.js';
import { crdTypesModule } from './crdTypesModule.js';
import { crdWebhookOptions, WEBHOOK_FLAGS_HELP, type WebhookFlags } from './crdWebhookFlags.js';
import { loadKubeConfig, useContext } from './kubeconfig.js';
import { parseDuration } from './parseDuration.js';
import { writeText } from './terminal.js';
import { act } from './usage.js';

const GENERATE_HELP = `
Examples:
  rxkube crd generate ./src/website.ts | kubectl apply -f -
  rxkube crd generate ./dist/website.js -o json > crds.json
  rxkube crd generate ./src/website.ts --webhook-service web-system/web-webhook --ca-bundle-file ca.crt

A .ts module is imported through Node's type stripping (Node >= 22.18).`;

const INSTALL_HELP = `
Examples:
  rxkube crd install ./src/website.ts
  rxkube crd install crds.yaml --context staging --timeout 2m

Each CRD is applied with server-side apply (field manager rxkube, taking over
conflicting fields unless --no-force-conflicts), then awaited until Established.`;

const TYPES_HELP = `
Examples:
  rxkube crd types certificates.yaml -o src/certificate.ts
  rxkube crd types -r httproutes.gateway.networking.k8s.io > src/httpRoute.ts`;

interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/**
 * The `crd` command group.
 *
 * @returns the command, to add to the program.
 */
export function crdCommand(): Command {
  const crd = new Command('crd').description('Custom-resource definitions: generate CRD manifests from a module, install them, or write TypeScript for a CRD.');

  /** The conversion-webhook flags both generate and install take. */
  const webhookFlags = (command: Command): Command =>
    command
      .option('--webhook-service <namespace/name[:port]>', 'conversion webhook of definitions with converters: a Service (path /convert, port 443 unless given)')
      .option('--webhook-url <url>', 'conversion webhook of definitions with converters: an https:// URL')
      .option('--ca-bundle-file <path>', 'PEM file of the CA the API server trusts for the conversion webhook');

  webhookFlags(crd.command('generate'))
    .description("Print the CustomResourceDefinition of every custom resource a module exports, ready for 'kubectl apply -f -'.")
    .argument('<module>', 'a .ts, .mts, .js or .mjs module exporting customResource() definitions')
    .addOption(new Option('-o, --output <format>', 'yaml (documents separated by ---) or json (a v1 List)').choices(['yaml', 'json']).default('yaml'))
    .addHelpText('after', GENERATE_HELP + WEBHOOK_FLAGS_HELP)
    .action(
      act(async (module: string, flags: WebhookFlags & { output: 'yaml' | 'json' }) => {
        const crds = (await loadCrdModule(module, crdWebhookOptions(flags))).map((e) => e.crd);
        writeText(process.stdout, manifestText(crds.map(orderCrd), flags.output));
        return 0;
      }),
    );

  webhookFlags(crd.command('install'))
    .description('Server-side apply the CRDs of a module or a YAML/JSON file, and wait until each is Established.')
    .argument('<source>', 'a module exporting customResource() definitions, or a .yaml/.yml/.json file of CRDs')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: the current one)')
    .option('--no-force-conflicts', 'fail on fields another field manager owns, instead of taking them over')
    .addOption(new Option('--timeout <duration>', 'how long to wait for every CRD to be Established').default(60_000, '60s').argParser(parseDuration))
    .addHelpText('after', INSTALL_HELP + WEBHOOK_FLAGS_HELP)
    .action(
      act(async (source: string, flags: ClusterFlags & WebhookFlags & { forceConflicts: boolean; timeout: number }) => {
        const crds = await crdsFrom(source, crdWebhookOptions(flags));
        const kc = useContext(loadKubeConfig(flags.kubeconfig), flags.context);
        return installCrds(kc, crds, { force: flags.forceConflicts, timeoutMs: flags.timeout, out: process.stdout, err: process.stderr });
      }),
    );

  crd
    .command('types')
    .description('Write a TypeScript module (types and a customResource() definition) for a CRD, from a file or from the cluster.')
    .argument('[file]', 'a .yaml/.yml/.json file holding the CRD')
    .option('-r, --resource <name>', "the CRD from the cluster: its name (websites.example.com), plural, singular or short name")
    .option('-o, --output <file.ts>', 'write the module to this file (default: stdout)')
    .option('--kubeconfig <path>', 'with -r: kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'with -r: kubeconfig context to use (default: the current one)')
    .addHelpText('after', TYPES_HELP)
    .action(
      act(async (file: string | undefined, flags: ClusterFlags & { resource?: string; output?: string }) => {
        const input = await crdTypesInput(file, flags.resource, () => useContext(loadKubeConfig(flags.kubeconfig), flags.context));
        const text = crdTypesModule(input);
        if (flags.output === undefined) writeText(process.stdout, text);
        else writeFileSync(flags.output, text);
        return 0;
      }),
    );

  return crd;
}
