import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as models132 from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';

// deploy/k8s renders with `kubectl kustomize` (kubectl 1.32 with kustomize 5.5 on these machines) for
// every overlay, and every rendered object is checked against the Kubernetes API twice, with schemas
// generated from Kubernetes' own OpenAPI, none written here:
// - kubernetes-models (npm, pinned): its JSON Schema validators (required fields, types, formats such as
//   quantities and int-or-string). Its latest CommonJS release carries the v1.33.0 schema (merged with
//   older versions'), the nearest to 1.32 it publishes;
// - @kubernetes/client-node (npm, pinned), whose models are generated from the v1.32.0 OpenAPI: every
//   field of every object must exist in Kubernetes 1.32 (kubectl's strict field validation refuses the
//   rest at apply time; a typo there otherwise goes unnoticed until a deploy).
// Then what a reviewer checks by hand: probes, resources, non-root, no Secret data, PDBs and
// NetworkPolicies for every service, the executor's node access and nothing else's.
const root = fileURLToPath(new URL('../../', import.meta.url));
const k8s = `${root}deploy/k8s`;
const KUBERNETES_OPENAPI = 'v1.32.0';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  [field: string]: unknown;
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: unknown;
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
}
interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  secret?: { secretName: string; optional?: boolean };
  configMap?: { name: string };
  projected?: { sources: { secret?: { name: string }; configMap?: { name: string } }[] };
  persistentVolumeClaim?: { claimName: string };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  nodeSelector?: Record<string, string>;
  securityContext?: SecurityContext & { fsGroup?: number };
  automountServiceAccountToken?: boolean;
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

const overlays = readdirSync(`${k8s}/overlays`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const productionOverlays = overlays.filter((name) => name.startsWith('production'));
const serviceNames = readdirSync(`${root}services`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${root}services/${entry.name}/package.json`))
  .map((entry) => entry.name)
  .sort();
/** Each service's HTTP port: its config's default, as scripts/writ-up.sh and docker-compose number them. */
const httpPorts: Record<string, number> = { projection: 8080, ingress: 8081, orchestrator: 8082, policy: 8083, approval: 8084, executor: 8085, receipt: 8086 };
/** Made by scripts/k8s-secrets.sh from a `writ init` directory (or, the last, by the operator when secret handles are used). */
const externalSecrets = ['writ-nats-auth', 'writ-trust-anchor', 'writ-operator-bus', 'writ-postgres-admin', ...serviceNames.map((name) => `writ-${name}`), 'writ-executor-secret-handles'];
const externalConfigMaps = ['writ-deployment'];
const workloadKinds = ['Deployment', 'StatefulSet', 'DaemonSet'];

function render(overlay: string): K8sObject[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', `${k8s}/overlays/${overlay}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stderr, code } = error as { stderr?: string; code?: string };
    throw new Error(code === 'ENOENT' ? 'kubectl is not on PATH: deploy/k8s is validated with `kubectl kustomize` (scripts/stack-up.sh machines have it)' : `kubectl kustomize overlays/${overlay} failed: ${stderr}`);
  }
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0) throw new Error(`overlays/${overlay}: ${document.errors[0]?.message}`);
    return document.toJS() as K8sObject;
  });
}

const rendered = new Map<string, K8sObject[]>();
beforeAll(() => {
  for (const overlay of overlays) rendered.set(overlay, render(overlay));
});
const objectsOf = (overlay: string): K8sObject[] => rendered.get(overlay) ?? [];
const id = (object: K8sObject) => `${object.kind}/${object.metadata.name}`;
const podTemplate = (object: K8sObject): PodTemplate | undefined => {
  if (object.kind === 'Job') return (object.spec as { template: PodTemplate }).template;
  return workloadKinds.includes(object.kind) ? (object.spec as { template: PodTemplate }).template : undefined;
};
const podsOf = (objects: K8sObject[]) => objects.flatMap((object) => (podTemplate(object) ? [{ object, template: podTemplate(object) as PodTemplate }] : []));
const component = (template: PodTemplate) => template.metadata.labels['app.kubernetes.io/component'];
const serviceEnv = (container: Container) => container.env?.find((entry) => entry.name === 'SERVICE')?.value;

function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return labels[key] !== undefined && values.includes(labels[key]);
    if (operator === 'NotIn') return labels[key] === undefined || !values.includes(labels[key]);
    if (operator === 'Exists') return key in labels;
    return !(key in labels);
  });
  return byLabels && byExpressions;
}

/** The kubernetes-models class of an object (`apps/v1` → kubernetes-models/apps/v1, `v1` → kubernetes-models/v1). */
async function modelOf(object: K8sObject): Promise<{ new (data: unknown): { validate(): void } } | undefined> {
  const module = (await import(/* @vite-ignore */ `kubernetes-models/${object.apiVersion}`)) as Record<string, { new (data: unknown): { validate(): void } } | undefined>;
  return module[object.kind];
}

/**
 * The fields of `value` that Kubernetes 1.32 does not know, walking the types of client-node's models
 * (generated from the v1.32.0 OpenAPI): `Array<T>`, `{ [key: string]: T; }`, a model, or a leaf.
 */
function unknownFields(value: unknown, type: string, path: string): string[] {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) return Array.isArray(value) ? value.flatMap((item, index) => unknownFields(item, array[1] as string, `${path}[${index}]`)) : [`${path}: not a list`];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return typeof value === 'object' && value !== null ? Object.entries(value).flatMap(([key, item]) => unknownFields(item, map[1] as string, `${path}.${key}`)) : [`${path}: not a map`];
  const model = (models132 as unknown as Record<string, { getAttributeTypeMap?: () => { baseName: string; type: string }[] } | undefined>)[type];
  if (model?.getAttributeTypeMap === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object (${type})`];
  const attributes = model.getAttributeTypeMap();
  return Object.entries(value).flatMap(([key, item]) => {
    const attribute = attributes.find((candidate) => candidate.baseName === key);
    return attribute === undefined ? [`${path}.${key}: no such field in ${type} of Kubernetes ${KUBERNETES_OPENAPI}`] : unknownFields(item, attribute.type, `${path}.${key}`);
  });
}

describe('deploy/k8s', () => {
  it('has the overlays the README describes, each rendering with kubectl kustomize', () => {
    expect(overlays).toEqual(['dev', 'production', 'production-external-postgres']);
    for (const overlay of overlays) expect(objectsOf(overlay).length, overlay).toBeGreaterThan(30);
  });

  it(`validates every rendered object against the Kubernetes JSON Schema (kubernetes-models) and the ${KUBERNETES_OPENAPI} API's fields (client-node)`, async () => {
    // The pin: client-node's models name the OpenAPI version they were generated from.
    const generatedFrom = readFileSync(fileURLToPath(import.meta.resolve('@kubernetes/client-node/dist/gen/models/V1Container.js')), 'utf8');
    expect(/OpenAPI spec version: (v[\d.]+)/.exec(generatedFrom)?.[1]).toBe(KUBERNETES_OPENAPI);
    const failures: string[] = [];
    for (const overlay of overlays) {
      for (const object of objectsOf(overlay)) {
        const Model = await modelOf(object);
        if (Model === undefined) {
          failures.push(`${overlay} ${id(object)}: ${object.apiVersion} ${object.kind} is not a Kubernetes API`);
          continue;
        }
        try {
          new Model(object).validate();
        } catch (error) {
          failures.push(`${overlay} ${id(object)}: ${(error as Error).message}`);
        }
        const version = object.apiVersion.split('/').at(-1) as string;
        const type = `${version.charAt(0).toUpperCase()}${version.slice(1)}${object.kind}`;
        if ((models132 as unknown as Record<string, unknown>)[type] === undefined) failures.push(`${overlay} ${id(object)}: no ${type} in Kubernetes ${KUBERNETES_OPENAPI}`);
        else failures.push(...unknownFields(object, type, `${overlay} ${id(object)}`));
      }
    }
    expect(failures).toEqual([]);
  });

  it('fails validation for a broken object (the validators are live, not vacuous)', async () => {
    const deployment = structuredClone(objectsOf('production').find((object) => object.kind === 'Deployment')) as K8sObject;
    const container = (deployment.spec as { template: PodTemplate }).template.spec.containers[0] as Container & Record<string, unknown>;
    container.resources = { limits: { cpu: 'one core' } };
    container['livenessProbes'] = container.livenessProbe;
    const Model = await modelOf(deployment);
    expect(() => Model && new Model(deployment).validate()).toThrow(/quantity/);
    expect(unknownFields(deployment, 'V1Deployment', 'broken')).toEqual([expect.stringMatching(/containers\[0\]\.livenessProbes: no such field/)]);
  });

  it('runs every service of the repository: executor as a DaemonSet, the others as Deployments, each on the one service image', () => {
    for (const overlay of overlays) {
      const byService = new Map(podsOf(objectsOf(overlay)).flatMap(({ object, template }) => template.spec.containers.filter(serviceEnv).map((c) => [serviceEnv(c) as string, { object, container: c }] as const)));
      expect([...byService.keys()].sort(), overlay).toEqual(serviceNames);
      for (const [name, { object, container }] of byService) {
        expect(object.kind, `${overlay} ${name}`).toBe(name === 'executor' ? 'DaemonSet' : 'Deployment');
        expect(container.image, `${overlay} ${name}`).toBe('writ/service:0.1.0');
        expect(container.env?.find((entry) => entry.name === 'WRIT_HTTP_PORT')?.value, `${overlay} ${name}`).toBe(String(httpPorts[name]));
        expect(container.ports, `${overlay} ${name}`).toEqual([{ name: 'http', containerPort: httpPorts[name] }]);
      }
      const images = new Set(podsOf(objectsOf(overlay)).flatMap(({ template }) => template.spec.containers.map((c) => `${c.image} ${c.imagePullPolicy}`)));
      expect([...images].sort(), overlay).toEqual(['writ/nats:2.9.10 IfNotPresent', ...(overlay.includes('external-postgres') ? [] : ['writ/postgres:15 IfNotPresent']), 'writ/service:0.1.0 IfNotPresent']);
    }
  });

  it('gives every long-running container its three probes and CPU and memory requests and limits', () => {
    for (const overlay of overlays) {
      for (const { object, template } of podsOf(objectsOf(overlay))) {
        for (const container of template.spec.containers) {
          const where = `${overlay} ${id(object)} ${container.name}`;
          if (object.kind !== 'Job') {
            expect(container.startupProbe, where).toBeDefined();
            expect(container.livenessProbe, where).toBeDefined();
            expect(container.readinessProbe, where).toBeDefined();
          }
          expect(Object.keys(container.resources?.requests ?? {}).sort(), where).toEqual(['cpu', 'memory']);
          expect(Object.keys(container.resources?.limits ?? {}).sort(), where).toEqual(['cpu', 'memory']);
        }
      }
    }
  });

  it('runs every container non-root, read-only, without privilege or capabilities, except the executor (root, its listed capabilities)', () => {
    for (const overlay of overlays) {
      for (const { object, template } of podsOf(objectsOf(overlay))) {
        const pod = template.spec.securityContext ?? {};
        expect(template.spec.automountServiceAccountToken, `${overlay} ${id(object)}`).toBe(false);
        expect([template.spec.hostPID, template.spec.hostIPC], `${overlay} ${id(object)}`).toEqual([undefined, undefined]);
        for (const container of template.spec.containers) {
          const where = `${overlay} ${id(object)} ${container.name}`;
          const context = container.securityContext ?? {};
          expect(context.allowPrivilegeEscalation, where).toBe(false);
          expect(context.readOnlyRootFilesystem, where).toBe(true);
          expect(context.privileged ?? false, where).toBe(false);
          expect(context.capabilities?.drop, where).toEqual(['ALL']);
          if (component(template) === 'executor') {
            expect(context.runAsUser ?? pod.runAsUser, where).toBe(0);
            expect(context.capabilities?.add?.sort(), where).toEqual(['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'NET_ADMIN', 'NET_RAW', 'SETGID', 'SETUID']);
            continue;
          }
          expect(context.runAsNonRoot ?? pod.runAsNonRoot, where).toBe(true);
          expect(context.runAsUser ?? pod.runAsUser, where).toBe(10002);
          expect(context.capabilities?.add, where).toBeUndefined();
        }
      }
    }
  });

  it('gives the node (network, Docker socket, host directories) to the executor alone, on the nodes labelled for it, with the cells root at the same path inside and out', () => {
    for (const overlay of overlays) {
      for (const { object, template } of podsOf(objectsOf(overlay))) {
        const hostPaths = (template.spec.volumes ?? []).filter((volume) => volume.hostPath);
        if (component(template) !== 'executor') {
          expect([hostPaths, template.spec.hostNetwork], `${overlay} ${id(object)}`).toEqual([[], undefined]);
          continue;
        }
        expect(template.spec.nodeSelector).toEqual({ 'writ.dev/executor': 'true' });
        expect(template.spec.hostNetwork).toBe(true);
        const container = template.spec.containers[0] as Container;
        const env = (name: string) => container.env?.find((entry) => entry.name === name)?.value;
        const mountOf = (volume: string) => container.volumeMounts?.find((mount) => mount.name === volume)?.mountPath;
        const cells = hostPaths.find((volume) => volume.hostPath?.path === env('WRIT_CELLS_ROOT'));
        expect(cells && mountOf(cells.name)).toBe(env('WRIT_CELLS_ROOT'));
        const socket = hostPaths.find((volume) => volume.hostPath?.type === 'Socket');
        expect(socket?.hostPath?.path).toBe('/var/run/docker.sock');
        expect(socket && mountOf(socket.name)).toBe(env('WRIT_DOCKER_SOCKET'));
        expect(env('WRIT_CELL_IMAGE')).toBe('writ/cell:latest');
        expect(hostPaths).toHaveLength(2);
      }
    }
  });

  it('holds no Secret and no secret value: every Secret it names comes from scripts/k8s-secrets.sh', () => {
    const script = readFileSync(`${root}scripts/k8s-secrets.sh`, 'utf8');
    for (const name of externalSecrets.filter((n) => n !== 'writ-executor-secret-handles')) {
      const service = /^writ-(.+)$/.exec(name)?.[1] ?? '';
      expect(script.includes(`secret generic ${name} `) || (serviceNames.includes(service) && script.includes('secret generic "writ-$name"')), name).toBe(true);
    }
    for (const overlay of overlays) {
      const objects = objectsOf(overlay);
      expect(objects.filter((object) => object.kind === 'Secret').map(id), overlay).toEqual([]);
      const text = JSON.stringify(objects);
      // Private JWKs, PEM keys, NATS creds and seeds, passwords as values.
      expect(text, overlay).not.toMatch(/"d":"|PRIVATE KEY|BEGIN NATS|\bSU[A-Z2-7]{50,}|password[=:][^/"$\s]/i);
      const configMaps = new Set(objects.filter((object) => object.kind === 'ConfigMap').map((object) => object.metadata.name));
      for (const { object, template } of podsOf(objects)) {
        const secrets = [
          ...(template.spec.volumes ?? []).flatMap((volume) => [volume.secret?.secretName, ...(volume.projected?.sources ?? []).map((source) => source.secret?.name)]),
          ...template.spec.containers.flatMap((c) => [...(c.env ?? []).map((entry) => (entry.valueFrom as { secretKeyRef?: { name: string } } | undefined)?.secretKeyRef?.name), ...(c.envFrom ?? []).map((source) => source.secretRef?.name)]),
        ].filter((name): name is string => name !== undefined);
        for (const name of secrets) expect(externalSecrets, `${overlay} ${id(object)} names Secret ${name}`).toContain(name);
        const maps = [
          ...(template.spec.volumes ?? []).flatMap((volume) => [volume.configMap?.name, ...(volume.projected?.sources ?? []).map((source) => source.configMap?.name)]),
          ...template.spec.containers.flatMap((c) => [...(c.env ?? []).map((entry) => (entry.valueFrom as { configMapKeyRef?: { name: string } } | undefined)?.configMapKeyRef?.name), ...(c.envFrom ?? []).map((source) => source.configMapRef?.name)]),
        ].filter((name): name is string => name !== undefined);
        for (const name of maps) expect(configMaps.has(name) || externalConfigMaps.includes(name), `${overlay} ${id(object)} names ConfigMap ${name}`).toBe(true);
      }
    }
  });

  it('in production: 3 NATS nodes and R3 streams, 2+ pods of every Deployment, and a PodDisruptionBudget over each Deployment and StatefulSet but the single Postgres', () => {
    expect(productionOverlays).toEqual(['production', 'production-external-postgres']);
    for (const overlay of productionOverlays) {
      const objects = objectsOf(overlay);
      const config = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('writ-config-'));
      expect(config?.data?.['WRIT_STREAM_REPLICAS'], overlay).toBe('3');
      expect((objects.find((object) => id(object) === 'StatefulSet/writ-nats')?.spec as { replicas: number }).replicas, overlay).toBe(3);
      const budgets = objects.filter((object) => object.kind === 'PodDisruptionBudget');
      for (const object of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')) {
        const spec = object.spec as { replicas: number; template: PodTemplate };
        if (object.kind === 'Deployment') expect(spec.replicas, `${overlay} ${id(object)}`).toBeGreaterThanOrEqual(2);
        if (id(object) === 'StatefulSet/writ-postgres') continue;
        const covering = budgets.filter((budget) => selects((budget.spec as { selector: LabelSelector }).selector, spec.template.metadata.labels));
        expect(covering.map(id), `${overlay} ${id(object)}`).toHaveLength(1);
        const budget = covering[0]?.spec as { maxUnavailable?: number; minAvailable?: number };
        // At least one pod (two NATS nodes of three) stays through a drain.
        expect(spec.replicas - (budget.maxUnavailable ?? spec.replicas - (budget.minAvailable ?? 0)), `${overlay} ${id(object)}`).toBeGreaterThanOrEqual(object.kind === 'StatefulSet' ? 2 : 1);
      }
      for (const claim of objects.filter((object) => object.kind === 'PersistentVolumeClaim')) {
        expect((claim.spec as { accessModes: string[] }).accessModes, `${overlay} ${id(claim)}: replicas share the keyring`).toEqual(['ReadWriteMany']);
      }
    }
    const dev = objectsOf('dev');
    expect(dev.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('writ-config-'))?.data?.['WRIT_STREAM_REPLICAS']).toBe('1');
    expect((dev.find((object) => id(object) === 'StatefulSet/writ-nats')?.spec as { replicas: number }).replicas).toBe(1);
  });

  it('denies all traffic by default and lets each pod reach and be reached only as it needs', () => {
    for (const overlay of overlays) {
      const objects = objectsOf(overlay);
      const policies = objects.filter((object) => object.kind === 'NetworkPolicy').map((object) => ({ name: object.metadata.name, spec: object.spec as { podSelector: LabelSelector; policyTypes: string[]; ingress?: Rule[]; egress?: Rule[] } }));
      const denyAll = policies.find((policy) => Object.keys(policy.spec.podSelector).length === 0 && policy.spec.ingress === undefined && policy.spec.egress === undefined);
      expect(denyAll?.spec.policyTypes.sort(), overlay).toEqual(['Egress', 'Ingress']);
      const applying = (labels: Record<string, string>) => policies.filter((policy) => policy !== denyAll && selects(policy.spec.podSelector, labels));
      const ingressPorts = (labels: Record<string, string>, from: 'anywhere' | 'monitoring') =>
        applying(labels).flatMap((policy) =>
          (policy.spec.ingress ?? [])
            .filter((rule) => (from === 'anywhere' ? rule.from === undefined : rule.from === undefined || rule.from.some((peer) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'monitoring')))
            .flatMap((rule) => (rule.ports ?? []).map((port) => port.port)),
        );
      const egressTo = (labels: Record<string, string>) =>
        applying(labels).flatMap((policy) => (policy.spec.egress ?? []).flatMap((rule) => (rule.to ?? []).map((peer) => `${peer.podSelector?.matchLabels?.['app.kubernetes.io/component'] ?? peer.ipBlock?.cidr ?? peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']}:${(rule.ports ?? []).map((p) => p.port).join(',')}`)));
      for (const { object, template } of podsOf(objects)) {
        const labels = template.metadata.labels;
        const name = component(template) as string;
        const where = `${overlay} ${id(object)}`;
        expect(applying(labels).map((policy) => policy.name), where).toContain(`writ-dns`);
        if (name in httpPorts) {
          expect(applying(labels).map((policy) => policy.name), where).toContain(`writ-${name}`);
          // Prometheus scrapes /metrics on the HTTP port, from the monitoring namespace.
          expect(template.metadata.annotations, where).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(httpPorts[name]), 'prometheus.io/path': '/metrics' });
          expect(ingressPorts(labels, 'monitoring'), where).toContain(httpPorts[name]);
          expect(ingressPorts(labels, 'anywhere'), `${where}: from outside`).toEqual(name === 'ingress' || name === 'projection' ? [httpPorts[name]] : []);
          const postgres = overlay.includes('external-postgres') ? '192.0.2.10/32:5432' : 'postgres:5432';
          expect(egressTo(labels).filter((to) => !to.startsWith('kube-system')).sort(), where).toEqual(name === 'projection' ? [postgres, 'nats:4222'].sort() : ['nats:4222']);
        }
      }
      if (!overlay.includes('external-postgres')) {
        const postgres = podsOf(objects).find(({ template }) => component(template) === 'postgres')?.template.metadata.labels ?? {};
        expect(ingressPorts(postgres, 'anywhere')).toEqual([]);
        const clients = applying(postgres).flatMap((policy) => (policy.spec.ingress ?? []).flatMap((rule) => (rule.from ?? []).map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/component'])));
        expect(clients.sort(), overlay).toEqual(['pg-setup', 'projection']);
      }
      const nats = podsOf(objects).find(({ template }) => component(template) === 'nats')?.template.metadata.labels ?? {};
      expect(ingressPorts(nats, 'anywhere'), `${overlay}: the bus is the trust boundary, credentials guard it`).toEqual([4222]);
    }
  });
});

interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port: number }[];
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
