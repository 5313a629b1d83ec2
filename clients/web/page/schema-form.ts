// A form from a skill's input or parameter schema: one field per property of an object schema,
// of the kind its type calls for. The daemon checks the values against the schema (INPUT_INVALID,
// with the path of each field at fault), so the form checks only what the browser does anyway.
import { html } from 'htm/preact';
import { terminalText } from '../../terminal-text.js';

/** The part of a JSON Schema the form reads. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  items?: Schema;
  description?: string;
  title?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

/** How a property is filled in. */
type FieldKind = 'choice' | 'text' | 'line' | 'number' | 'integer' | 'boolean' | 'json';

/** Strings this long or shorter get a one-line field. */
const LINE_MAX = 200;

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'choice';
  switch (schema.type) {
    case 'string':
      return schema.maxLength !== undefined && schema.maxLength <= LINE_MAX ? 'line' : 'text';
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'json';
  }
}

/** The values of a form as typed: text per field (a checkbox: "true" or ""). */
export type FormValues = Record<string, string>;

/** What was typed, as the object to send; a field left empty is left out. Throws naming the field whose JSON does not parse. */
export function formObject(schema: Schema, values: FormValues): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const text = values[name] ?? '';
    const kind = kindOf(property);
    if (kind === 'boolean') {
      if (text !== '') object[name] = true;
      continue;
    }
    if (text === '') continue;
    if (kind === 'number' || kind === 'integer') object[name] = Number(text);
    else if (kind === 'choice') object[name] = property.enum?.[Number(text)];
    else if (kind === 'json') object[name] = looseValue(text);
    else object[name] = text;
  }
  return object;
}

/** A value as JSON when it parses, else the text itself (as skillctl's --input reads one). */
function looseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The form's starting values: each property's default. */
export function initialValues(schema: Schema | null): FormValues {
  const values: FormValues = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    if (property.default === undefined) continue;
    const kind = kindOf(property);
    if (kind === 'boolean') values[name] = property.default === true ? 'true' : '';
    else if (kind === 'choice') values[name] = String(property.enum?.indexOf(property.default) ?? '');
    else values[name] = typeof property.default === 'string' ? property.default : JSON.stringify(property.default);
  }
  return values;
}

/** The fields of one schema, each labelled, with its description and the daemon's complaint about it. */
export function SchemaFields(props: { schema: Schema; prefix: string; values: FormValues; errors: Record<string, string>; change: (name: string, value: string) => void }) {
  const { schema, prefix, values, errors, change } = props;
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const id = `${prefix}-${name}`;
    const kind = kindOf(property);
    const error = errors[`/${name}`];
    const described = [property.description === undefined ? '' : `${id}-help`, error === undefined ? '' : `${id}-error`].filter(Boolean).join(' ') || undefined;
    const common = { id, name, 'aria-describedby': described, 'aria-invalid': error === undefined ? undefined : 'true' };
    const value = values[name] ?? '';
    const set = (e: Event): void => change(name, (e.target as HTMLInputElement).value);
    let field;
    if (kind === 'boolean') field = html`<input ...${common} type="checkbox" checked=${value !== ''} onChange=${(e: Event) => change(name, (e.target as HTMLInputElement).checked ? 'true' : '')} />`;
    else if (kind === 'choice')
      field = html`<select ...${common} required=${required.has(name)} value=${value} onChange=${set}>
        <option value="">${required.has(name) ? 'choose…' : '(none)'}</option>
        ${(property.enum ?? []).map((option, index) => html`<option value=${String(index)}>${terminalText(typeof option === 'string' ? option : JSON.stringify(option))}</option>`)}
      </select>`;
    else if (kind === 'number' || kind === 'integer')
      field = html`<input ...${common} type="number" step=${kind === 'integer' ? '1' : 'any'} min=${property.minimum} max=${property.maximum} required=${required.has(name)} value=${value} onInput=${set} />`;
    else if (kind === 'line') field = html`<input ...${common} type="text" maxlength=${property.maxLength} required=${required.has(name)} value=${value} onInput=${set} />`;
    else field = html`<textarea ...${common} rows=${kind === 'json' ? 2 : 4} required=${required.has(name)} value=${value} onInput=${set}></textarea>`;
    return html`<div class="field" key=${id}>
      <label for=${id}>${terminalText(property.title ?? name)}${required.has(name) ? html` <span class="required">(required)</span>` : ''}${kind === 'json' ? html` <span class="quiet">(JSON, or text)</span>` : ''}</label>
      ${field}
      ${property.description !== undefined && html`<p class="help" id=${`${id}-help`}>${terminalText(property.description)}</p>`}
      ${error !== undefined && html`<p class="error" id=${`${id}-error`}>${terminalText(error)}</p>`}
    </div>`;
  });
}
