import { RE2JS } from 're2js';

/** What Ajv needs of a compiled pattern. */
interface LinearPattern {
  test(text: string): boolean;
  toString(): string;
}

/**
 * Ajv's regular-expression engine for skill schemas (`pattern`, `patternProperties`): RE2
 * semantics, matching in time linear in the input, so no pattern a skill declares (`^(a+)+$`,
 * say) can hold the event loop while a client's input is validated. RE2 has no lookaround and no
 * backreferences: a schema that uses them fails to compile, and its skill is shown invalid with
 * the reason. Ajv's `u` flag needs nothing: RE2 matches Unicode code points anyway.
 */
export const linearRegExp = Object.assign(
  (pattern: string): LinearPattern => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    // Ajv shares compiled patterns by this text: it must be the pattern itself.
    return { test: (text) => compiled.test(text), toString: () => pattern };
  },
  // Only used by Ajv's standalone code generation, which the daemon does not use.
  { code: 'linearRegExp' },
);
