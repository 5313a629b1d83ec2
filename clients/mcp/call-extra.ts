import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/** What the SDK hands a request handler: the abort signal, the request's id and `_meta`, notifications tied to it. */
export type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
