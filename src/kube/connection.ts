/** Where the API server is and how to reach it, as resolved from the flags, kubeconfig or the pod. */
import type { AuthHeaders } from './auth.ts';

export interface TlsSettings {
  readonly ca: Buffer | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly insecureSkipTLSVerify: boolean;
  readonly serverName: string | undefined;
}

export type ConnectionSource = 'in-cluster' | 'kubeconfig' | 'apiserver-override';

/** Everything needed to reach one API server: where, how to trust it, and how to authenticate. */
export interface ApiConnection {
  /** scheme://host[:port], no trailing slash. */
  readonly server: string;
  readonly source: ConnectionSource;
  readonly tls: TlsSettings;
  readonly authHeaders: AuthHeaders;
}
