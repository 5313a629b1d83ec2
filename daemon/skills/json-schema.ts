import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** One schema violation, as clients see it in `details`. */
export interface SchemaIssue {
  path: string;
  message: string;
}

export type Validator = (value: unknown) => SchemaIssue[];

const OPTIONS = { allErrors: true, strict: false } as const;
const draft07 = new Ajv(OPTIONS);
const draft2020 = new Ajv2020(OPTIONS);

/**
 * Compiles a skill's JSON Schema (draft-07 unless its `$schema` names 2020-12) into a validator
 * that returns the list of issues, empty when the value is valid. Throws when the schema is broken.
 */
export function compileSchema(schema: unknown): Validator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('a schema must be a JSON object');
  const id = (schema as { $schema?: unknown }).$schema;
  const ajv = typeof id === 'string' && id.includes('2020-12') ? draft2020 : draft07;
  // Compile without caching by $id so two skills may reuse an $id without clashing.
  const { $id: _ignored, ...body } = schema as Record<string, unknown>;
  const validate: ValidateFunction = ajv.compile(body);
  return (value) => (validate(value) ? [] : toIssues(validate.errors ?? []));
}

function toIssues(errors: ErrorObject[]): SchemaIssue[] {
  return errors.map((error) => ({ path: error.instancePath === '' ? '/' : error.instancePath, message: error.message ?? 'is invalid' }));
}
