import { z } from 'zod';
import { patternError } from './pattern.ts';

/** An RE2 pattern that must compile with the agent's engine. */
export const re2Pattern = z.string().superRefine((text, ctx) => {
  const err = patternError(text);
  if (err) ctx.addIssue({ code: 'custom', message: `invalid regex: ${err}` });
});
