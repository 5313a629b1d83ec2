/**
 * The wire protocol's version: raised when a method or a shape changes so that a client written
 * for the one before would misread it (additions do not raise it). `daemon/ping` says it. A
 * module of its own, so that skillctl reads it without the methods' schemas and their compiler.
 */
export const PROTOCOL_VERSION = 1;
