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
  /** The PEM read from eventOtlpCaFile once, while parsing the flags; "" when none. */
  readonly eventOtlpCa: string;
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

/**
 * Reads --event-otlp-ca-file once, at flag parsing, so that the sink uses the very PEM that was
 * checked; an unreadable or non-PEM file is a startup error, never a silent fall back to Node's bundle.
 */
export function readOtlpCa(file: string, errors: string[]): string {
  if (file === '') return '';
  try {
    const pem = readFileSync(file, 'utf8');
    if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem;
    errors.push(`--event-otlp-ca-file: ${file}: no PEM certificate in it`);
  } catch (err) {
    errors.push(`--event-otlp-ca-file: ${file}: ${(err as Error).message}`);
  }
  return '';
}

/** Flag checks that need more than the flag parser's types. */
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
}

/** The TLS settings of the sink, with the CA PEM read (and checked) at flag parsing. */
export function otlpTls(c: OtlpConfig): { ca?: string; insecureSkipVerify: boolean } {
  return {
    ...(c.eventOtlpCa !== '' ? { ca: c.eventOtlpCa } : {}),
    insecureSkipVerify: c.eventOtlpInsecureSkipTlsVerify,
  };
}
