/**
 * Sealed upload URLs. Every agent can list every NodeDiagnostic (reads are not admission-controlled
 * and all agents share one ServiceAccount), so a plain `uploadURL` is a credential every node holds.
 * Each agent therefore has an X25519 key pair and publishes the public half on its own Node (the
 * annotation below, written through nodes/status, which the node-binding policy allows only for the
 * agent's own node). An operator seals the URL to that key and the node's name; only that agent can
 * open it.
 *
 * Format: npd-sealed-v1.<kid>.<ephemeral public key>.<iv>.<ciphertext>.<tag>, base64url parts.
 * ECDH(ephemeral, node key) → HKDF-SHA256 (salt: both public keys) → AES-256-GCM, with the node's
 * name as additional data so a URL sealed for one node cannot be opened as another's.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import type { NodeDiagnosticRequest } from '../kube/node-diagnostics.ts';

export const KEY_ANNOTATION = 'node-problem-detector.io/diagnostics-key';
export const SEALED_PREFIX = 'npd-sealed-v1';
const KEY_PREFIX = 'x25519:';
const INFO = Buffer.from('node-problem-detector NodeDiagnostic uploadURL v1');
const RAW_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An error whose message is safe for a request's status: it names no URL and no key material. */
export class SealError extends Error {}

/** This agent's key: the annotation value it publishes, and opening URLs sealed to it. */
export interface UploadKey {
  /** `x25519:<base64url public key>`, the value of KEY_ANNOTATION. */
  readonly annotation: string;
  /** A short, public fingerprint of the public key; sealed URLs carry it. */
  readonly kid: string;
  /** The private key as PKCS#8 PEM, for the key file. */
  readonly pem: string;
  open(sealed: string, nodeName: string): string;
}

const b64 = (b: Buffer): string => b.toString('base64url');
const rawPublic = (key: KeyObject): Buffer =>
  Buffer.from(String((key.export({ format: 'jwk' }) as { x?: string }).x ?? ''), 'base64url');
const kidOf = (raw: Buffer): string => createHash('sha256').update(raw).digest('hex').slice(0, 16);

function publicFromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64(raw) }, format: 'jwk' });
}

function aesKey(privateKey: KeyObject, peer: KeyObject, ephRaw: Buffer, nodeRaw: Buffer): Buffer {
  const shared = diffieHellman({ privateKey, publicKey: peer });
  return Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephRaw, nodeRaw]), INFO, 32));
}

export function newUploadKey(): UploadKey {
  return uploadKeyFrom(generateKeyPairSync('x25519').privateKey);
}

/** The key from its PEM (the key file); throws when it is not an X25519 private key. */
export function uploadKeyFromPem(pem: string): UploadKey {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'x25519') throw new Error('not an X25519 private key');
  return uploadKeyFrom(key);
}

function uploadKeyFrom(privateKey: KeyObject): UploadKey {
  const raw = rawPublic(createPublicKey(privateKey));
  const kid = kidOf(raw);
  return {
    annotation: `${KEY_PREFIX}${b64(raw)}`,
    kid,
    pem: String(privateKey.export({ format: 'pem', type: 'pkcs8' })),
    open: (sealed, nodeName) => openSealed(sealed, nodeName, { privateKey, raw, kid }),
  };
}

/** The node's public key from its annotation value; a SealError when it is not one. */
function parseAnnotation(annotation: string): Buffer {
  const raw = annotation.startsWith(KEY_PREFIX)
    ? Buffer.from(annotation.slice(KEY_PREFIX.length), 'base64url')
    : Buffer.alloc(0);
  if (raw.length !== RAW_KEY_BYTES)
    throw new SealError(`the key is not a ${KEY_ANNOTATION} value (${KEY_PREFIX}<32 bytes base64url>)`);
  return raw;
}

/** Seals `url` for the agent whose Node annotation is `annotation`, on node `nodeName`. */
export function sealUploadURL(url: string, annotation: string, nodeName: string): string {
  const nodeRaw = parseAnnotation(annotation);
  const eph = generateKeyPairSync('x25519');
  const ephRaw = rawPublic(eph.publicKey);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(eph.privateKey, ephRaw, nodeRaw), iv);
  cipher.setAAD(Buffer.from(nodeName));
  const ct = Buffer.concat([cipher.update(url, 'utf8'), cipher.final()]);
  return [SEALED_PREFIX, kidOf(nodeRaw), b64(ephRaw), b64(iv), b64(ct), b64(cipher.getAuthTag())].join('.');
}

/**
 * The AES key for sealing. A 32-byte value that is no usable X25519 public key (all zeros, or another
 * point of small order, RFC 7748 section 6.1) makes the key agreement fail: that is the key's fault,
 * a SealError, not a crash.
 */
function sealingKey(ephPrivate: KeyObject, ephRaw: Buffer, nodeRaw: Buffer): Buffer {
  try {
    return aesKey(ephPrivate, publicFromRaw(nodeRaw), ephRaw, nodeRaw);
  } catch {
    throw new SealError(
      `the key is not a usable X25519 public key: key agreement with it fails (a ${KEY_ANNOTATION} value is never all zeros)`,
    );
  }
}

/** A value from the request quoted in a status: a key id is 16 characters, anything longer is cut. */
const shown = (value: string): string => (value.length <= 32 ? value : `${value.slice(0, 32)}…`);

interface Own {
  readonly privateKey: KeyObject;
  readonly raw: Buffer;
  readonly kid: string;
}

function openSealed(sealed: string, nodeName: string, own: Own): string {
  const parts = sealed.split('.');
  if (parts.length !== 6 || parts[0] !== SEALED_PREFIX)
    throw new SealError(`sealedUploadURL is not a sealed upload URL (${SEALED_PREFIX}.…)`);
  const [, kid, ...encoded] = parts;
  if (kid !== own.kid)
    throw new SealError(
      `sealedUploadURL was sealed to key ${shown(kid ?? '')}, but this node's agent has key ${own.kid}: seal it again with the node's current ${KEY_ANNOTATION}`,
    );
  const [ephRaw, iv, ct, tag] = encoded.map((p) => Buffer.from(p, 'base64url')) as [
    Buffer,
    Buffer,
    Buffer,
    Buffer,
  ];
  if (ephRaw.length !== RAW_KEY_BYTES || iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
    throw new SealError('sealedUploadURL is damaged');
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      aesKey(own.privateKey, publicFromRaw(ephRaw), ephRaw, own.raw),
      iv,
    );
    decipher.setAAD(Buffer.from(nodeName));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('sealedUploadURL could not be opened: it was sealed for another node, or changed');
  }
}

const PLAIN_REFUSED =
  'uploadURL refused: a plain uploadURL is readable by every node; set sealedUploadURL instead (docs/diagnostics.md), or start the agent with --diagnostics-allow-plain-upload-url';

/** Where a request's bundle goes: its sealed URL opened with this agent's key, or an allowed plain one. */
export function uploadTarget(req: NodeDiagnosticRequest, key: UploadKey, allowPlain: boolean): string {
  if (req.sealedUploadURL !== '') return key.open(req.sealedUploadURL, req.nodeName);
  if (!allowPlain) throw new SealError(PLAIN_REFUSED);
  return req.uploadURL;
}
