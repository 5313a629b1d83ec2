import type { EngineName } from '../model/job.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import type { EngineAdapter } from './engine.js';
import { gemini } from './gemini.js';
import { iflow } from './iflow.js';

/** Every engine the daemon knows, by name. */
export const ENGINES: Readonly<Record<EngineName, EngineAdapter>> = { codex, gemini, iflow, claude };
