import {
  EVIDENCE_ANNOTATION,
  EVIDENCE_FLAG_ANNOTATION,
  EVIDENCE_WRITER_ANNOTATION,
  type Evidence,
  evidenceLabel,
} from '../core/evidence.ts';

/**
 * The Event's annotations (names in core/evidence.ts, where the fleet view reads them too). Not in the
 * reason or message, which stay NPD's (alerts and consumers match on them); not in the correlator's
 * keys, which no annotation enters, so identical events are counted and aggregated as before.
 */
export { EVIDENCE_ANNOTATION, EVIDENCE_FLAG_ANNOTATION, EVIDENCE_WRITER_ANNOTATION };

export type Annotations = Readonly<Record<string, string>>;

/** The annotations of an event with this evidence; undefined when it has none. */
export function evidenceAnnotations(e: Evidence | undefined): Annotations | undefined {
  if (e === undefined) return undefined;
  const out: Record<string, string> = { [EVIDENCE_ANNOTATION]: evidenceLabel(e) };
  const w = e.writer;
  if (w !== undefined) {
    const fields = [
      ['_TRANSPORT', w.transport],
      ['_SYSTEMD_UNIT', w.unit],
      ['_UID', w.uid],
      ['_COMM', w.comm],
    ] as const;
    const text = fields.flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]));
    if (text.length > 0) out[EVIDENCE_WRITER_ANNOTATION] = text.join(' ');
  }
  if (e.flag !== undefined) out[EVIDENCE_FLAG_ANNOTATION] = e.flag;
  return out;
}
