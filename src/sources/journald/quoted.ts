import type { QuotedSpan } from '../../core/types.ts';

/**
 * The values containerd and the kubelet quote from a pod, in their own log lines (docs/rules.md, "Who
 * wrote the text"). Both write key="value" pairs (containerd through logrus' text formatter, the
 * kubelet through klog's structured `"msg" key="value"`), and a value quotes the text it embeds again,
 * Go's strconv.Quote inside the value: runc's `exec: "<the pod's command>": executable file not
 * found` becomes `error="... exec: \"<command>\": executable file not found ..."`. So the spans
 * between two nested quotes (`\"`, one backslash) are quoted text: a container's command, image or
 * name, an error a container's own process printed.
 *
 * The pod cannot end such a span early: a quote of its own reaches the line escaped twice (`\\\"`,
 * three backslashes) and a backslash of its own as `\\\\`, so exactly one backslash before a quote is
 * only ever the daemon's.
 */
export function nestedQuoteSpans(text: string): QuotedSpan[] | undefined {
  if (!text.includes('\\"')) return undefined;
  const spans: QuotedSpan[] = [];
  let open = -1;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) {
    if (backslashesBefore(text, i) !== 1) continue;
    if (open < 0) {
      open = i + 1;
      continue;
    }
    // The span ends before the backslash of the closing `\"`.
    if (i - 1 > open && !ownQuote(text, open)) spans.push([open, i - 1]);
    open = -1;
  }
  // An unclosed nested quote (a line cut at the journal's bound) quotes the rest of the line.
  if (open >= 0 && open < text.length) spans.push([open, text.length]);
  return spans.length > 0 ? spans : undefined;
}

/**
 * Nested quotes a library writes around its own text: grpc-go's ConnectionError.Error() (internal/
 * transport/transport.go) is `connection error: desc = %q` around its dial error ("transport: Error
 * while dialing dial unix /run/containerd/containerd.sock: connect: connection refused").
 */
const OWN_QUOTES = ['connection error: desc = \\"'];

function ownQuote(text: string, open: number): boolean {
  return OWN_QUOTES.some((q) => text.startsWith(q, open - q.length));
}

function backslashesBefore(text: string, i: number): number {
  let n = 0;
  while (i - n - 1 >= 0 && text.charCodeAt(i - n - 1) === 0x5c) n++;
  return n;
}
