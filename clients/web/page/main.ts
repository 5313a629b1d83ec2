// The page for the person in the loop (docs/web.md): jobs, a job with its conversation and
// question, the skills, and a form to start a job.
import { render } from 'preact';
import { html } from 'htm/preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
