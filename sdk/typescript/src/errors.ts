// The error a call to Escouade rejects with, and the one a handler throws to answer an error.

import { ErrorCode, type ErrorName } from './protocol';

/**
 * An error with a JSON-RPC code: what Escouade answered to a call (`-32003` refused, `-32004`
 * failed, `-32005` not found...), or what a handler throws to answer with that code.
 */
export class EscouadeError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'EscouadeError';
    this.code = code;
    this.data = data;
  }

  /** The name of its code in the schema (`refused`, `notFound`...), when it has one. */
  get codeName(): ErrorName | undefined {
    for (const [name, code] of Object.entries(ErrorCode)) {
      if (code === this.code) return name as ErrorName;
    }
    return undefined;
  }

  /** An error object of the protocol ({code, message, data?}) as an EscouadeError. */
  static from(error: unknown): EscouadeError {
    if (error instanceof EscouadeError) return error;
    const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
    const code = e && typeof e.code === 'number' ? e.code : ErrorCode.internal;
    const message = e && typeof e.message === 'string' ? e.message : 'an error without a message';
    return new EscouadeError(code, message, e ? e.data : undefined);
  }
}

/** Thrown by a handler: answers -32602 with this sentence. */
export function invalidParams(message: string): EscouadeError {
  return new EscouadeError(ErrorCode.invalidParams, message);
}
