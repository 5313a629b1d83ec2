import type { Usage } from '../../model/usage.js';
import { countsOf, fieldsOf, isPresent, reportedUsage } from '../reported-usage.js';

/**
 * What a `session/prompt` answer says the turn used: Gemini (0.61) puts it in the answer's
 * `_meta.quota.token_count` (`input_tokens`, the prompt tokens of each model call, cached ones
 * included; `output_tokens`, the answer tokens, thoughts left out), summed over the turn's calls,
 * which it does not count, nor the cached tokens; `model_usage` splits the same counts by model.
 * A cancelled turn's answer carries none. The protocol's own `usage` member is unstable and says
 * nothing of whether its input counts the cached tokens: it is not read.
 */
export function acpUsage(response: unknown): Usage | null {
  const quota = fieldsOf(fieldsOf(fieldsOf(response)['_meta'])['quota']);
  if (!isPresent(quota['token_count'])) return null;
  const count = fieldsOf(quota['token_count']);
  return reportedUsage(countsOf(count, 'input_tokens'), countsOf(count, 'output_tokens'), 0, null);
}
