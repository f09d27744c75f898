/** The simulator's accounts and address book: who may send, with what credit, reachable how. */
export interface SimulatorAccountInit {
  id: string;
  token: string;
  credit?: number;
  /** Numbers that use Viber, WhatsApp, RCS: those channels deliver only to these. */
  viber?: string[];
  whatsapp?: string[];
  rcs?: string[];
  /** Country used to complete numbers when a request gives none (the account's time zone). */
  country?: string;
  /** Numbers whose messages are not delivered (delivery report status 3). */
  unreachable?: string[];
  /** Numbers whose messages never get a delivery report (a phone that stays off, a lost report). */
  silent?: string[];
  /** Milliseconds from sending to the delivery report, per number (others: the webhook's delay). */
  reportDelay?: Record<string, number>;
}

export const DEMO_ACCOUNT: Required<SimulatorAccountInit> = {
  id: '10000',
  token: 'demo-simulator-token',
  credit: 100,
  viber: ['420777000001', '420777000002'],
  whatsapp: ['420777000003'],
  rcs: ['420777000004'],
  country: 'CZ',
  unreachable: ['420777000999'],
  silent: ['420777000998'],
  reportDelay: {},
};

type Contact = { number: string; first_name: string; last_name: string };

/** Address-book groups and administrators every simulated account has. */
export const ADDRESS_BOOK: { groups: Record<number, Contact[]>; admins: Record<number, Contact> } = {
  groups: {
    1: [
      { number: '420777000011', first_name: 'Jana', last_name: 'Nováková' },
      { number: '420777000012', first_name: 'Petr', last_name: 'Svoboda' },
    ],
    2: [{ number: '447700900013', first_name: 'Alice', last_name: 'Smith' }],
  },
  admins: {
    1: { number: '420777000021', first_name: 'Admin', last_name: 'One' },
    2: { number: '420777000022', first_name: 'Admin', last_name: 'Two' },
  },
};

export type SimulatorAccount = ReturnType<typeof createAccount>;

export function createAccount(init: SimulatorAccountInit) {
  return {
    id: init.id,
    token: init.token,
    credit: init.credit ?? 100,
    currency: 'credits',
    viber: new Set(init.viber ?? []),
    whatsapp: new Set(init.whatsapp ?? []),
    rcs: new Set(init.rcs ?? []),
    country: (init.country ?? 'CZ').toUpperCase(),
    unreachable: new Set(init.unreachable ?? []),
    silent: new Set(init.silent ?? []),
    reportDelay: new Map(Object.entries(init.reportDelay ?? {}).filter(([, ms]) => Number.isFinite(ms) && ms >= 0)),
  };
}

/**
 * Parses `ID:TOKEN[:CREDIT]` (the `--account` flag). The id ends at the first colon; the last part
 * is the credit when it looks like a number or is empty (the default), so a token may hold colons.
 */
export function parseAccountFlag(flag: string): SimulatorAccountInit {
  const parts = flag.split(':');
  const id = parts.shift();
  const last = parts.at(-1);
  const credit = parts.length >= 2 && last !== undefined && /^[-+.\d]*$/.test(last) ? parts.pop() : undefined;
  const token = parts.join(':');
  if (!id || !token) throw new Error(`--account must be ID:TOKEN[:CREDIT], got "${flag}"`);
  if (credit === undefined || credit === '') return { id, token, credit: undefined };
  const parsed = /^\+?(\d+\.?\d*|\.\d+)$/.test(credit) ? Number(credit) : NaN;
  if (!(parsed >= 0)) throw new Error(`--account credit must be a number 0 or more, got "${credit}"`);
  return { id, token, credit: parsed };
}
