import type { Lifecycle } from '@hapi/hapi';
import type Joi from 'joi';
import { InvalidInput } from '../errors.ts';

/** Joi failures become InvalidInput: 400 with one message and a detail per field. */
export const failAction: Lifecycle.Method = (_request, _h, err) => {
  const joiErr = err as Joi.ValidationError | undefined;
  if (!joiErr?.details) throw err ?? new InvalidInput('invalid request');
  const details = joiErr.details.map((d) => ({ field: d.path.join('.'), message: d.message.replace(/"/g, '') }));
  throw new InvalidInput(details.map((d) => d.message).join('; '), details);
};
