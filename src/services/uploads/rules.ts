import { InvalidInput } from '../../errors.ts';
import { keyProblem } from '../../storage/contract.ts';

export interface UploadRequest {
  key: string;
  size: number;
  project: string | null;
}

const PROJECT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Checks the query of GET /api/v1/rigs/upload; every problem is an InvalidInput naming the field. */
export function parseUploadRequest(query: { key?: unknown; size?: unknown; project?: unknown }, maxSize: number): UploadRequest {
  const fail = (field: string, message: string): never => {
    throw new InvalidInput(`${field}: ${message}`, [{ field, message }]);
  };
  if (query.key === undefined || query.key === '') fail('key', 'is required');
  if (typeof query.key !== 'string') fail('key', 'must be given once');
  const problem = keyProblem(query.key);
  if (problem) fail('key', problem.replace(/^key /, ''));

  if (query.size === undefined || query.size === '') fail('size', 'is required');
  if (typeof query.size !== 'string' || !/^\d{1,16}$/.test(query.size)) fail('size', 'must be a whole number of bytes');
  const size = Number(query.size);
  if (size > maxSize) fail('size', `must be at most ${maxSize} bytes`);

  let project: string | null = null;
  if (query.project !== undefined && query.project !== '') {
    if (typeof query.project !== 'string') fail('project', 'must be given once');
    const slug = (query.project as string).toLowerCase();
    if (!PROJECT.test(slug)) fail('project', 'must be a slug: 1-64 letters, digits, "-" or "_"');
    project = slug;
  }
  return { key: query.key as string, size, project };
}
