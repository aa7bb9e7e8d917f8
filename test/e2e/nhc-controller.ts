/**
 * The real medik8s NodeHealthCheck controller (built by test/tools/repair-consumers/build.sh) against
 * the test control plane: its CRDs, its admission webhook (the controller serves it; the API server
 * calls it on 127.0.0.1), a minimal remediation template CRD of our own (NHC creates a remediation CR
 * of kind <Template kind minus "Template"> from the template's spec.template, with the node's name)
 * and the controller process itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import type { ControlPlane } from './harness/controlplane.ts';
import { ManagedProcess, readTail } from './harness/processes.ts';
import { applyObject, installCrds, type RepairConsumers } from './repair-support.ts';

/** NHC serves its webhook on 9443, fixed in its cmd/main.go (webhook.Options{Port: 9443}). */
const WEBHOOK_PORT = 9443;
export const REMEDIATION_NAMESPACE = 'npd-e2e-remediation';
export const REMEDIATION_GROUP = 'remediation.e2e.npd.io';
export const REMEDIATION_RESOURCE = `e2eremediations.${REMEDIATION_GROUP}`;

function remediationCrd(kind: string, plural: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${REMEDIATION_GROUP}` },
    spec: {
      group: REMEDIATION_GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          },
        },
      ],
    },
  };
}

/** The template object the NHC CR's remediationTemplate names. */
export const TEMPLATE_REF = {
  apiVersion: `${REMEDIATION_GROUP}/v1alpha1`,
  kind: 'E2eRemediationTemplate',
  name: 'reboot',
  namespace: REMEDIATION_NAMESPACE,
};

async function installRemediationKinds(cp: ControlPlane, dir: string): Promise<void> {
  const crds = join(dir, 'remediation-crds');
  mkdirSync(crds, { recursive: true });
  writeFileSync(
    join(crds, 'remediation.yaml'),
    stringify(remediationCrd('E2eRemediation', 'e2eremediations')),
  );
  writeFileSync(
    join(crds, 'template.yaml'),
    stringify(remediationCrd('E2eRemediationTemplate', 'e2eremediationtemplates')),
  );
  await installCrds(cp, crds);
  await cp.kubectl(['create', 'namespace', REMEDIATION_NAMESPACE]);
  const template = {
    apiVersion: TEMPLATE_REF.apiVersion,
    kind: TEMPLATE_REF.kind,
    metadata: { name: TEMPLATE_REF.name, namespace: REMEDIATION_NAMESPACE },
    spec: { template: { spec: { action: 'reboot' } } },
  };
  const r = await applyObject(cp, template);
  if (r.code !== 0) throw new Error(`remediation template: ${r.stderr}`);
}

/** A self-signed serving certificate for 127.0.0.1 where controller-runtime looks for it. */
function webhookCert(tmp: string): string {
  const dir = join(tmp, 'k8s-webhook-server', 'serving-certs');
  mkdirSync(dir, { recursive: true });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'tls.key'),
      '-out',
      join(dir, 'tls.crt'),
    ],
    { stdio: 'ignore' },
  );
  return readFileSync(join(dir, 'tls.crt')).toString('base64');
}

/** NHC's own ValidatingWebhookConfiguration, pointed at the controller on 127.0.0.1. */
async function registerWebhook(cp: ControlPlane, file: string, caBundle: string): Promise<void> {
  const config = parseYaml(readFileSync(file, 'utf8')) as {
    metadata: { name: string };
    webhooks: { clientConfig: Record<string, unknown> }[];
  };
  config.metadata.name = 'npd-e2e-nhc-validating-webhook';
  for (const hook of config.webhooks) {
    const service = hook.clientConfig.service as { path: string };
    hook.clientConfig = { url: `https://127.0.0.1:${WEBHOOK_PORT}${service.path}`, caBundle };
  }
  const r = await applyObject(cp, config);
  if (r.code !== 0) throw new Error(`webhook configuration: ${r.stderr}`);
}

export interface NhcController {
  log(): string;
  stop(): Promise<void>;
}

/** Installs NHC's CRDs, the remediation kinds and the webhook, then starts the controller. */
export async function startNhc(
  cp: ControlPlane,
  tools: RepairConsumers,
  dir: string,
): Promise<NhcController> {
  await installCrds(cp, tools.NHC_CRDS);
  await installRemediationKinds(cp, dir);
  await cp.kubectl(['create', 'namespace', 'npd-e2e-nhc']);
  const tmp = join(dir, 'nhc-tmp');
  const caBundle = webhookCert(tmp);
  await registerWebhook(cp, tools.NHC_WEBHOOK, caBundle);
  const logFile = join(dir, 'nhc.log');
  // No leader election (one replica), no metrics or probe listeners (nothing scrapes them here).
  const proc = new ManagedProcess(
    'nhc',
    [
      'env',
      `KUBECONFIG=${cp.adminKubeconfig}`,
      'DEPLOYMENT_NAMESPACE=npd-e2e-nhc',
      `TMPDIR=${tmp}`,
      tools.NHC_MANAGER,
      '--leader-elect=false',
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
    ],
    logFile,
  );
  return {
    log: () => readTail(logFile, 60),
    stop: () => proc.stop(),
  };
}
