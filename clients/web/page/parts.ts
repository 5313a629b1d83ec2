// Small pieces the places share.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CallError } from './api.js';
import { terminalText } from '../../terminal-text.js';

/** The time now, moving on every `everyMs` (ages in lists). */
export function useNow(everyMs = 15_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** An error as the daemon said it: its stable code, then its message, read out when it appears. */
export function ErrorLine({ error }: { error: { code: string; message: string; path?: string } | CallError }) {
  const path = 'path' in error && typeof error.path === 'string' ? error.path : null;
  return html`<p class="error" role="alert"><code class="code">${error.code}</code> ${terminalText(error.message)}${path === null ? '' : html` <span class="path">(${terminalText(path)})</span>`}</p>`;
}

/**
 * A button that asks first, in a modal dialog (keyboard: Escape keeps things as they are; the
 * focus starts on the safe choice), then runs `action`.
 */
export function ConfirmButton(props: { label: string; question: string; yes: string; no: string; action: () => Promise<void> | void; danger?: boolean }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const safe = useRef<HTMLButtonElement>(null);
  const open = (): void => {
    dialog.current?.showModal();
    safe.current?.focus();
  };
  const confirm = async (): Promise<void> => {
    dialog.current?.close();
    await props.action();
  };
  return html`
    <button type="button" class=${props.danger === true ? 'danger' : ''} onClick=${open}>${props.label}</button>
    <dialog ref=${dialog} aria-label=${props.label}>
      <p>${props.question}</p>
      <div class="actions">
        <button type="button" ref=${safe} onClick=${() => dialog.current?.close()}>${props.no}</button>
        <button type="button" class=${props.danger === true ? 'danger' : 'primary'} onClick=${() => void confirm()}>${props.yes}</button>
      </div>
    </dialog>
  `;
}
