/**
 * rigd's own steps of the request lifecycle (request id, deadline, VPN rule, body limits, error
 * format, common headers), run from one hapi extension per point, in the order they were added.
 * Each extension hapi runs is an awaited call with promises of its own; every request, rig reports
 * first, used to pay for ten of them.
 */
import type { Boom } from '@hapi/boom';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';

/** The points before the handler. */
export type RequestPoint = 'onRequest' | 'onPreAuth' | 'onPostAuth';

/**
 * A step before the handler: h.continue to go on, or a takeover response that answers the request
 * here (the steps after it do not run); an error thrown is the answer.
 */
export type RequestStep = (request: Request, h: ResponseToolkit) => Lifecycle.ReturnValue;

/** A step on the way out: takes the response so far (an error or not) and gives the one to go on with. */
export type ResponseStep = (request: Request, h: ResponseToolkit, response: ResponseObject | Boom) => ResponseObject | Boom;

interface Steps {
  before: Map<RequestPoint, RequestStep[]>;
  preResponse: ResponseStep[] | null;
}

const byServer = new WeakMap<Server, Steps>();

function stepsOf(server: Server): Steps {
  let steps = byServer.get(server);
  if (!steps) byServer.set(server, (steps = { before: new Map(), preResponse: null }));
  return steps;
}

/** Runs step at point, after the steps added there before it (its extension is registered with the first). */
export function addStep(server: Server, point: RequestPoint, step: RequestStep): void {
  const { before } = stepsOf(server);
  let list = before.get(point);
  if (!list) {
    const steps: RequestStep[] = (list = []);
    before.set(point, steps);
    server.ext(point, (request, h) => {
      for (const run of steps) {
        const result = run(request, h);
        if (result !== h.continue) return result;
      }
      return h.continue;
    });
  }
  list.push(step);
}

/**
 * Runs step in onPreResponse, after the steps added before it; each sees the response the one
 * before it gave. The last one's goes out (hapi's own onPreResponse chain, in one extension).
 */
export function addResponseStep(server: Server, step: ResponseStep): void {
  const steps = stepsOf(server);
  if (!steps.preResponse) {
    const list: ResponseStep[] = (steps.preResponse = []);
    server.ext('onPreResponse', (request, h) => {
      const original = request.response;
      if (!original) return h.continue;
      let response = original;
      for (const run of list) response = run(request, h, response);
      return response === original ? h.continue : response;
    });
  }
  steps.preResponse.push(step);
}
