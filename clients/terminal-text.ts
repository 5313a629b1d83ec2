/**
 * What reaches a terminal from an engine. Its text is untrusted: a control character in it is
 * not read but obeyed (clear the screen, move the cursor, set the window title, write the
 * clipboard with OSC 52, hide text, write over a line with a carriage return). skillctl prints
 * engine- and job-derived text for people through `terminalText`, and the engine's own bytes
 * (`logs --raw`) and JSON (`--json`) through `escapedText`: either way every such character is
 * shown, never dropped, on a terminal and piped alike.
 */

/**
 * The characters a terminal acts on: C0 controls but the line feed and the tab; a carriage
 * return, unless a line feed follows it (the two are one line break); DEL; C1 controls
 * (U+0080–U+009F, which some terminals obey as ESC sequences); and the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a line read in another
 * order than it is written. The bidi marks (U+200E, U+200F, U+061C) are kept: right-to-left
 * text carries them, and they only set the direction of the spaces and punctuation next to them.
 */
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}

/**
 * Text from an engine as a person may read it on a terminal: line feeds and tabs kept, every
 * other control character shown as JavaScript writes it, `\x` and two hex digits (`\x1b`, `\x0d`
 * for a lone carriage return, `\x7f`, `\x9b`), a bidi control as `\u` and four (`\u202e`).
 * Backslashes already in the text stay as they are. Its result has nothing left to show, so a
 * second pass changes nothing.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROLS, (char) => {
    const code = char.charCodeAt(0);
    return code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
}

/**
 * The same characters escaped as JSON escapes them (`\u001b`, `\u009b`, `\u202e`), for output
 * that is the engine's own bytes or a JSON document: inside a JSON string the escape means the
 * character itself, so a document stays valid JSON with the same value.
 */
export function escapedText(text: string): string {
  return text.replace(CONTROLS, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}
