import Joi from 'joi';
import type { ErrorDetail } from '../errors.ts';

/**
 * The one envelope of rigd's own JSON routes (docs/http-api.md#the-envelope), shaped like the
 * interface's answers: `{success: true, data: {...}}`, and on error
 * `{success: false, error: {code, message, details}}` (rendered by ext/errors.ts through `failure`).
 * The interface's own routes (sessions, user settings, upload reservation, webhook) keep their shapes.
 */
export interface Success<T extends object> {
  success: true;
  data: T;
}

export interface Failure {
  success: false;
  error: { code: string; message: string; details: ErrorDetail[] };
}

/** A successful answer: what the route found, under `data`. */
export function success<T extends object>(data: T): Success<T> {
  return { success: true, data };
}

/** An error answer (only ext/errors.ts renders these). */
export function failure(code: string, message: string, details: ErrorDetail[] = []): Failure {
  return { success: false, error: { code, message, details } };
}

/** The response schema of a route answering `success(data)`: for validation in tests and the OpenAPI document. */
export function successSchema(data: Joi.ObjectSchema): Joi.ObjectSchema {
  return Joi.object({ success: Joi.boolean().valid(true).required(), data: data.required() });
}

/** The error body of every JSON route, the interface's included (ext/errors.ts renders it with `failure`). */
export const failureSchema = Joi.object({
  success: Joi.boolean().valid(false).required(),
  error: Joi.object({
    code: Joi.string().required().description('Stable machine-readable code, e.g. invalid_input, missing_token, not_found.'),
    message: Joi.string().required().description('One line for people.'),
    details: Joi.array()
      .items(Joi.object({ field: Joi.string().required(), message: Joi.string().required() }).unknown(true))
      .required()
      .description('One entry per field at fault; empty when no field is.'),
  }).required(),
}).description('What every JSON route answers on an error.');
