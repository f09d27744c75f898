/** Starts the project's simulator on a free loopback port and talks to its control endpoints. */
import { DEMO_ACCOUNT } from '../../simulator/accounts';
import type { FaultSettings } from '../../simulator/faults';
import type { OutboxMessage } from '../../simulator/gateway';
import { startSimulator, type Simulator } from '../../simulator/server';
import type { ReceivedRequest } from '../../simulator/state';

export { DEMO_ACCOUNT };
export const TOKEN = 'test-token-9f8e7d6c5b4a';
export const ACCOUNT_ID = '20001';

export interface TestSimulator {
  url: string;
  sim: Simulator;
  requests(): Promise<ReceivedRequest[]>;
  lastRequest(): Promise<ReceivedRequest>;
  outbox(): Promise<{ messages: OutboxMessage[]; accounts: { id: string; credit: number }[] }>;
  fault(fault: FaultSettings): Promise<void>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** `id`: another account than ACCOUNT_ID, for a test whose account's shared store must start afresh (its prefix is the id). */
export async function startTestSimulator(
  credit = 1000,
  viber: string[] = ['420777000001'],
  id = ACCOUNT_ID,
): Promise<TestSimulator> {
  const sim = await startSimulator({ accounts: [{ id, token: TOKEN, credit, viber }] });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(sim.url + path, {
      method,
      // The simulator's controls take JSON only.
      headers: method === 'GET' ? undefined : { 'content-type': 'application/json' },
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    });
    return (await res.json()) as T;
  };
  return {
    url: sim.url,
    sim,
    requests: () => call('GET', '/simulator/requests'),
    lastRequest: async () => {
      const all = await call<ReceivedRequest[]>('GET', '/simulator/requests');
      const last = all.at(-1);
      if (!last) throw new Error('the simulator received no request');
      return last;
    },
    outbox: () => call('GET', '/simulator/outbox'),
    fault: async (fault) => void (await call('POST', '/simulator/faults', fault)),
    reset: async () => void (await call('POST', '/simulator/reset')),
    close: () => sim.close(),
  };
}
