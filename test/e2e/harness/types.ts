/**
 * The harness's public types, in one module with no imports so that every other harness module (and
 * controlplane.ts, which re-exports them) can depend on them without import cycles.
 */
export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
  /** The node binaries, built with kube-apiserver (same version); used by test/node. */
  kubeControllerManager?: string;
  kubeScheduler?: string;
  kubelet?: string;
  /** gitVersion the kube-apiserver was stamped with, e.g. v1.34.4 */
  kubernetesVersion: string;
  /** e.g. v3.6.16 */
  etcdVersion: string;
}

export interface StaticUser {
  name: string;
  groups?: string[];
}

export interface ControlPlaneOptions {
  /** Name of the Node object to create (default npd-e2e-node). */
  nodeName?: string;
  /** Extra labels for the Node. */
  nodeLabels?: Record<string, string>;
  /** Give the Node a Ready condition and an InternalIP, as a kubelet would (default true). */
  nodeReady?: boolean;
  /** Use these binaries instead of running build.sh. */
  binaries?: ControlPlaneBinaries;
  /** ClusterRole manifest bound to the agent user (default deploy/base/clusterrole.yaml). */
  clusterRoleFile?: string;
  /** More static-token users, known from the first start (see writeKubeconfig). */
  users?: StaticUser[];
  /**
   * Run kube-apiserver as a cluster with real nodes needs it (test/node): listening on `address:port`
   * (default 127.0.0.1 and a free port), Service IPs from `serviceClusterIpRange`, the Node authorizer,
   * the ServiceAccount and NodeRestriction admission plugins, and no Node object made by the harness:
   * the kubelet registers its own.
   */
  nodeCluster?: { address: string; port: number; serviceClusterIpRange: string };
  /** Extra kube-apiserver flags (`--flag=value`). */
  extraApiserverArgs?: string[];
  /** How long to wait for etcd and /readyz, each (default 120 s). */
  readyTimeoutMs?: number;
  /** Keep the work folder after stop() (default: env NPD_E2E_KEEP=1). */
  keep?: boolean;
  /** Where progress lines go (default: stderr when env NPD_E2E_VERBOSE=1, else nowhere). */
  log?: (line: string) => void;
}

export interface HttpResult {
  status: number;
  text: string;
  /** JSON body when the response is JSON, else undefined. */
  json: unknown;
  /** Response headers, names in lower case (e.g. APF's x-kubernetes-pf-flowschema-uid). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
}

export interface RequestOptions {
  body?: unknown;
  /** Defaults to application/json, or application/strategic-merge-patch+json for PATCH. */
  contentType?: string;
  /** Bearer token (default: the admin's). */
  token?: string;
  timeoutMs?: number;
}

export interface KubectlOptions {
  kubeconfig: string;
  /** HOME for kubectl (its discovery cache); default: a kube-home folder beside the kubeconfig. */
  home?: string;
  input?: string;
  timeoutMs?: number;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface AuditMark {
  /** Byte offset in the audit log: entries written after the mark start at or after it. */
  offset: number;
}

export interface AuditFilter {
  verb?: string | string[];
  /** objectRef.resource, e.g. 'events', 'nodes'. */
  resource?: string;
  /** objectRef.subresource, e.g. 'status'; null matches only requests without a subresource. */
  subresource?: string | null;
  /** objectRef.apiGroup: '' (core) or 'events.k8s.io'; undefined matches any. */
  apiGroup?: string;
  name?: string;
  namespace?: string;
  /** user.username, e.g. AGENT_USER. */
  user?: string;
  /** Default 'ResponseComplete', so each request counts once. */
  stage?: string;
  /** responseStatus.code; e.g. 201, or a predicate. */
  code?: number | ((code: number) => boolean);
}

export interface AuditEvent {
  verb: string;
  stage: string;
  requestURI: string;
  user?: { username?: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    apiGroup?: string;
    namespace?: string;
    name?: string;
  };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  [key: string]: unknown;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  etcdUrl: string;
  binaries: ControlPlaneBinaries;
  /** Kubeconfig of a system:masters user. */
  adminKubeconfig: string;
  adminToken: string;
  /** Kubeconfig of AGENT_USER, bound by a ClusterRoleBinding only to the ClusterRole file's role. */
  agentKubeconfig: string;
  agentToken: string;
  /** metadata.name of the ClusterRole read from the ClusterRole file. */
  clusterRoleName: string;
  nodeName: string;
  nodeUid: string;
  workDir: string;
  /** kube-apiserver's certificate (with its self-signed CA), as the kubeconfigs' certificate-authority. */
  caFile: string;
  auditLogPath: string;
  apiserverLog: string;
  etcdLog: string;
  /** Process ids (each also its process group id) while running. */
  pids(): { etcd?: number; apiserver?: number };

  /**
   * A kubeconfig for a static-token user, optionally bound to a ClusterRole. A user not known when the
   * apiserver started is added to the token file, which kube-apiserver reads only at start: then
   * the apiserver is restarted (same port) before this resolves.
   */
  writeKubeconfig(user: string, opts?: { groups?: string[]; clusterRole?: string }): Promise<string>;
  /** Raw REST call against the apiserver (admin token unless opts.token). Never throws on status. */
  request(method: string, apiPath: string, opts?: RequestOptions): Promise<HttpResult>;
  /** Runs kubectl (default: admin kubeconfig); throws with stderr on a non-zero exit. */
  kubectl(args: string[], opts?: Partial<KubectlOptions>): Promise<string>;
  /** Same, but returns the exit code and both streams and never throws on a non-zero exit. */
  kubectlResult(args: string[], opts?: Partial<KubectlOptions>): Promise<KubectlResult>;

  /** Marks the current end of the audit log. */
  auditMark(): AuditMark;
  auditEvents(filter?: AuditFilter, since?: AuditMark): AuditEvent[];
  countAudit(filter?: AuditFilter, since?: AuditMark): number;
  /**
   * Polls the audit log until at least `count` entries match (entries land just after the response,
   * so right after a request the count may lag for a few ms); returns the last count seen.
   */
  waitForAudit(
    filter: AuditFilter,
    since: AuditMark | undefined,
    count: number,
    timeoutMs?: number,
  ): Promise<number>;

  /** Stops kube-apiserver only (SIGTERM, then SIGKILL); etcd keeps the data. */
  stopApiserver(): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits for /readyz. */
  startApiserver(): Promise<void>;
  /** Keep the work folder on stop() (logs, audit log, kubeconfigs). */
  markFailed(): void;
  /** Stops everything and removes the work folder unless failed, opts.keep or NPD_E2E_KEEP=1. */
  stop(opts?: { failed?: boolean }): Promise<void>;
}
