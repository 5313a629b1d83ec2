import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { linearRegExp } from './linear-regexp.js';

/** One schema violation, as clients see it in `details`. */
export interface SchemaIssue {
  path: string;
  message: string;
}

export type Validator = (value: unknown) => SchemaIssue[];

const OPTIONS = { allErrors: true, strict: false, code: { regExp: linearRegExp } } as const;

/** Validators kept by schema text; the least recently used is dropped beyond this. */
export const SCHEMA_CACHE_LIMIT = 512;
/** An Ajv instance compiles at most this many schemas before a fresh one takes over. */
export const COMPILES_PER_INSTANCE = 64;

/**
 * An Ajv instance keeps every schema and function it ever compiled (in its code scope), so one
 * long-lived instance grows by a few KiB with each compile: with a compile per job, a daemon that
 * runs for weeks would grow without bound. Instances are therefore replaced after a number of
 * compiles; an old one is freed once no validator it made is in use.
 */
class Compiler {
  readonly #make: () => Ajv;
  #ajv: Ajv | null = null;
  #compiles = 0;

  constructor(make: () => Ajv) {
    this.#make = make;
  }

  compile(schema: Record<string, unknown>): ValidateFunction {
    if (this.#ajv === null || this.#compiles >= COMPILES_PER_INSTANCE) {
      this.#ajv = this.#make();
      this.#compiles = 0;
    }
    this.#compiles += 1;
    const validate = this.#ajv.compile(schema);
    this.#ajv.removeSchema(schema);
    return validate;
  }
}

const draft07 = new Compiler(() => new Ajv(OPTIONS));
const draft2020 = new Compiler(() => new Ajv2020(OPTIONS));
const cache = new Map<string, Validator>();

/**
 * Compiles a skill's JSON Schema (draft-07 unless its `$schema` names 2020-12) into a validator
 * that returns the list of issues, empty when the value is valid. Throws when the schema is broken.
 * Equal schema texts share one validator: every job of a skill version loads the same schemas.
 */
export function compileSchema(schema: unknown): Validator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('a schema must be a JSON object');
  const id = (schema as { $schema?: unknown }).$schema;
  const draft2020Named = typeof id === 'string' && id.includes('2020-12');
  // Compile without $id so two skills may reuse an $id without clashing.
  const { $id: _ignored, ...body } = schema as Record<string, unknown>;
  const key = `${draft2020Named ? '2020' : '07'} ${JSON.stringify(body)}`;
  const cached = cache.get(key);
  if (cached !== undefined) {
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const validate = (draft2020Named ? draft2020 : draft07).compile(body);
  const validator: Validator = (value) => (validate(value) ? [] : toIssues(validate.errors ?? []));
  cache.set(key, validator);
  if (cache.size > SCHEMA_CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return validator;
}

function toIssues(errors: ErrorObject[]): SchemaIssue[] {
  return errors.map((error) => ({ path: error.instancePath === '' ? '/' : error.instancePath, message: messageOf(error) }));
}

/** Ajv's message, naming the property where Ajv's own does not: an extra one is the usual typo. */
function messageOf(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: unknown; unevaluatedProperty?: unknown };
  const extra = error.keyword === 'additionalProperties' ? params.additionalProperty : error.keyword === 'unevaluatedProperties' ? params.unevaluatedProperty : undefined;
  if (typeof extra === 'string') return `must NOT have the property "${extra}" (the schema allows no other properties)`;
  return error.message ?? 'is invalid';
}
