import { readFileSync } from 'node:fs';
import { VERSION } from '../../core/version.ts';
import type { Attributes } from './otlp-log.ts';
import type { OtlpProtocol } from './otlp-wire.ts';

/** The agent options the OTLP sink reads (a subset of Options). */
export interface OtlpConfig {
  /** "" disables the OTLP sink. */
  readonly eventOtlpEndpoint: string;
  readonly eventOtlpProtocol: string;
  readonly eventOtlpHeaders: Readonly<Record<string, string>>;
  readonly eventOtlpTimeoutMs: number;
  /** "" keeps Node's CA bundle. */
  readonly eventOtlpCaFile: string;
  readonly eventOtlpInsecureSkipTlsVerify: boolean;
  /** OTEL_RESOURCE_ATTRIBUTES, read only when the endpoint is set. */
  readonly eventOtlpResource: Attributes;
}

export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

export const SERVICE = { name: 'node-problem-detector', version: VERSION } as const;

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry SDK reads it: `key=value` pairs separated by commas,
 * values percent-decoded. Errors name the variable and the pair, never guess.
 */
export function parseResourceAttributes(value: string | undefined, errors: string[]): Attributes {
  const out: [string, string][] = [];
  for (const pair of (value ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq).trim();
    if (eq <= 0 || key === '') {
      errors.push(`OTEL_RESOURCE_ATTRIBUTES: expected key=value, got "${pair.trim()}"`);
      continue;
    }
    try {
      out.push([key, decodeURIComponent(pair.slice(eq + 1).trim())]);
    } catch {
      errors.push(`OTEL_RESOURCE_ATTRIBUTES: ${key}: invalid percent-encoding`);
    }
  }
  return out;
}

function readCa(file: string): string | Error {
  try {
    const pem = readFileSync(file, 'utf8');
    return pem.includes('-----BEGIN CERTIFICATE-----') ? pem : new Error('no PEM certificate in it');
  } catch (err) {
    return err as Error;
  }
}

/** Flag checks that need more than the flag parser's types; reads the CA file to prove it is usable. */
export function validateOtlpConfig(c: OtlpConfig, errors: string[]): void {
  if (!OTLP_PROTOCOLS.includes(c.eventOtlpProtocol as OtlpProtocol)) {
    errors.push(`--event-otlp-protocol must be ${OTLP_PROTOCOLS.join(' or ')}`);
  }
  if (!(c.eventOtlpTimeoutMs > 0)) errors.push('--event-otlp-timeout must be positive');
  if (c.eventOtlpEndpoint === '') return;
  const url = URL.canParse(c.eventOtlpEndpoint) ? new URL(c.eventOtlpEndpoint) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    errors.push('--event-otlp-endpoint must be an http:// or https:// URL');
  }
  if (c.eventOtlpCaFile !== '') {
    const ca = readCa(c.eventOtlpCaFile);
    if (ca instanceof Error) errors.push(`--event-otlp-ca-file: ${c.eventOtlpCaFile}: ${ca.message}`);
  }
}

/** The TLS settings of the sink, the CA read once more now that validation proved it readable. */
export function otlpTls(c: OtlpConfig): { ca?: string; insecureSkipVerify: boolean } {
  const ca = c.eventOtlpCaFile === '' ? undefined : readCa(c.eventOtlpCaFile);
  return {
    ...(typeof ca === 'string' ? { ca } : {}),
    insecureSkipVerify: c.eventOtlpInsecureSkipTlsVerify,
  };
}
