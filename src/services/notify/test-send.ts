/**
 * `rigd notify test`: one test message to each configured target now, not through the queue, and
 * what each receiver answered.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/schema.ts';
import type { Answer } from './answer.ts';
import { testEvent } from './message.ts';
import { send } from './send.ts';
import { configuredTargets, targetLabel, type Target } from './targets.ts';

export interface TestResult extends Answer {
  type: Target['type'];
  target: string;
  delivery: string;
}

export async function sendTest(config: Readonly<Config>, only?: Target['type']): Promise<TestResult[]> {
  const event = testEvent(hostname());
  const timeoutMs = Math.round(config.notify.timeout_s * 1000);
  return Promise.all(
    configuredTargets(config.notify, only).map(async (t) => {
      const delivery = randomUUID();
      const answer = await send(t, event, config.server.base_url, { delivery, timeoutMs });
      return { type: t.type, target: targetLabel(t), delivery, ...answer };
    }),
  );
}
