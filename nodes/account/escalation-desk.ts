// One account's escalation incidents in this process: the book, its one timer, and its state
// written before anything is answered. The escalation nodes of the account attach to it; a step
// that comes due goes to the node that raised the incident, and waits while that node is being
// redeployed.
import { after, monotonicNow } from '../../gateway';
import {
  countIncidents,
  IncidentBook,
  nextDue,
  type EngineClock,
  type Ended,
  type Fired,
  type Incident,
  type PendingSms,
  type Policy,
  type ReplyOutcome,
} from './escalation';
import type { EscalationState } from './escalation-store';

export interface DeskHandler {
  /** A step came due (its SMS are pending and stored) or the chain ran out (the incident is gone). */
  fired(fired: Fired): void;
  /** Acknowledged or resolved, by a reply at any node or the flow. */
  ended(ended: Ended): void;
  /** SMS recorded as handed on but whose answer was not recorded (a crash): sent again. */
  resume(incident: Incident, sms: PendingSms[]): void;
  /**
   * Acknowledged or ended at another copy (the shared store): this copy's chain SMS still waiting are withdrawn, with
   * no output here.
   */
  withdrawn?(incident: Incident): void;
}

/**
 * What an escalation node asks of its account's incidents: this process's desk (a file) or the shared store's
 * (escalation-redis.ts).
 */
export interface IncidentDesk {
  /** The first look at the stored incidents is done. */
  readonly ready: Promise<void>;
  readonly loadError: unknown;
  readonly state: { readonly where: string };
  attach(node: string, handler: DeskHandler): () => void;
  raise(node: string, topic: string, policy: Policy, msg: Record<string, unknown>): Promise<Incident | undefined>;
  acknowledge(key: string, by: string): Promise<Ended | undefined>;
  resolve(key: string): Promise<Ended | undefined>;
  reply(from: string, text: string): Promise<ReplyOutcome>;
  answered(incident: Incident, sms: PendingSms, number?: string): Promise<void>;
  texted(key: string, number: string): void;
  stillEscalating(incident: Incident): boolean;
  /**
   * Whether a chain SMS of this incident kept in the outbox should still go, as the incidents' state says now
   * (IncidentBook.smsWanted).
   */
  stillWanted(key: string, code: string): Promise<boolean>;
  dropNode(node: string): Promise<Incident[]>;
  counts(node?: string): { open: number; acknowledged: number };
  /** Stops the timers; resolves once the writes already started are done (a test then removes the user directory). */
  close(): Promise<void>;
}

const REAL_CLOCK: EngineClock = { wall: () => Date.now(), mono: monotonicNow };

export class EscalationDesk implements IncidentDesk {
  book = new IncidentBook();
  readonly ready: Promise<void>;
  readonly #handlers = new Map<string, DeskHandler>();
  /** SMS handed on in this process and not yet answered: a node attached again does not send them again. */
  readonly #inFlight = new Set<string>();
  #writes: Promise<unknown> = Promise.resolve();
  #cancel: (() => void) | undefined;
  /** Why the stored book could not be read (the node says so; it starts with none). */
  loadError: unknown;

  constructor(
    readonly state: EscalationState,
    private readonly clock: EngineClock = REAL_CLOCK,
  ) {
    this.ready = state.read().then(
      (stored) => {
        this.book = IncidentBook.load(stored, clock);
      },
      (error: unknown) => {
        this.loadError = error;
      },
    );
  }

  attach(node: string, handler: DeskHandler): () => void {
    this.#handlers.set(node, handler);
    void this.ready.then(() => {
      if (this.#handlers.get(node) !== handler) return;
      for (const incident of this.book.incidents) {
        if (incident.node !== node || incident.acknowledged) continue;
        const waiting = incident.pending.filter((sms) => !this.#inFlight.has(smsKey(incident, sms)));
        if (waiting.length) {
          for (const sms of waiting) this.#inFlight.add(smsKey(incident, sms));
          handler.resume(incident, waiting);
        }
      }
      this.#arm();
    });
    return () => {
      if (this.#handlers.get(node) === handler) this.#handlers.delete(node);
      this.#arm();
    };
  }

  /** Undefined: an incident with this key is open; nothing new starts. Resolves once it is stored. */
  async raise(
    node: string,
    topic: string,
    policy: Policy,
    msg: Record<string, unknown>,
  ): Promise<Incident | undefined> {
    await this.ready;
    const incident = this.book.raise(node, topic, policy, msg, this.clock.mono());
    if (!incident) return undefined;
    await this.#write();
    // Its first step is due now: it fires from the timer, after the raising msg's done.
    this.#arm();
    return incident;
  }

  async acknowledge(key: string, by: string): Promise<Ended | undefined> {
    await this.ready;
    return this.#ended(this.book.acknowledge(key, by, this.clock.mono()));
  }

  async resolve(key: string): Promise<Ended | undefined> {
    await this.ready;
    return this.#ended(this.book.resolve(key, this.clock.mono()));
  }

  async reply(from: string, text: string): Promise<ReplyOutcome> {
    await this.ready;
    const outcome = this.book.reply(from, text, this.clock.mono());
    if ('acknowledged' in outcome) await this.#ended(outcome.acknowledged);
    return outcome;
  }

  async #ended(ended: Ended | undefined): Promise<Ended | undefined> {
    if (!ended) return undefined;
    await this.#write();
    this.#arm();
    this.#handlers.get(ended.incident.node)?.ended(ended);
    return ended;
  }

  /** The SMS's answer recorded: after a crash it is not sent again. */
  async answered(incident: Incident, sms: PendingSms, number?: string): Promise<void> {
    this.#inFlight.delete(smsKey(incident, sms));
    this.book.answered(incident.key, sms, number);
    await this.#write();
  }

  /** A number as the gateway wrote it, for an SMS that left the outbox: a reply from it acknowledges. */
  texted(key: string, number: string): void {
    this.book.answered(key, undefined, number);
    void this.#write().catch(() => undefined);
  }

  /** Whether the incident is still open and unacknowledged (a chain SMS still waiting is withdrawn otherwise). */
  stillEscalating(incident: Incident): boolean {
    const now = this.book.get(incident.key);
    return now === incident && !now.acknowledged;
  }

  async stillWanted(key: string, code: string): Promise<boolean> {
    await this.ready;
    return this.book.smsWanted(key, code);
  }

  /** A deleted node: its open incidents end (nothing more is sent for them). */
  async dropNode(node: string): Promise<Incident[]> {
    await this.ready;
    const dropped = this.book.dropNode(node, this.clock.mono());
    if (dropped.length) await this.#write();
    return dropped;
  }

  counts(node?: string): { open: number; acknowledged: number } {
    return countIncidents(this.book.incidents, node);
  }

  /** Writes one after another, each the whole book as it is then; a failed one fails its caller only. */
  #write(): Promise<void> {
    const written = this.#writes.then(() => this.state.write(this.book.stored(this.clock)));
    this.#writes = written.catch(() => undefined);
    return written;
  }

  #arm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    const next = nextDue(this.book.incidents, (node) => this.#handlers.has(node));
    if (next === undefined) return;
    this.#cancel = after(next - this.clock.mono(), () => {
      this.#cancel = undefined;
      void this.#fire();
    });
  }

  async #fire(): Promise<void> {
    const fired: Fired[] = [];
    const attached = (node: string) => this.#handlers.has(node);
    for (let round: Fired[]; (round = this.book.due(this.clock.mono(), attached)).length;) fired.push(...round);
    if (fired.length) {
      try {
        // Stored before any SMS is handed on: a crash after this sends each at most once more.
        await this.#write();
      } catch {
        // Not stored: the steps go on in memory (the node logs the store's trouble when it next writes).
      }
      for (const f of fired) {
        const handler = this.#handlers.get(f.incident.node);
        // Its node went away while the book was written: the SMS stay pending and go when it attaches again.
        if (!handler) continue;
        if (f.kind === 'step') for (const sms of f.sms) this.#inFlight.add(smsKey(f.incident, sms));
        handler.fired(f);
      }
    }
    this.#arm();
  }

  async close(): Promise<void> {
    this.#cancel?.();
    this.#cancel = undefined;
    await this.#writes;
  }
}

/**
 * The desks of this process, one per account and user directory: they outlive a redeploy, as the process's state does.
 */
const desks = new Map<string, IncidentDesk>();

export function deskFor(key: string, make: () => IncidentDesk): IncidentDesk {
  let desk = desks.get(key);
  if (!desk) desks.set(key, (desk = make()));
  return desk;
}

/** As a new process would start: every desk forgotten, the next node loads its account's from the store (tests). */
export async function forgetDesks(): Promise<void> {
  const closing = [...desks.values()].map((desk) => desk.close());
  desks.clear();
  await Promise.all(closing);
}

function smsKey(incident: Incident, sms: PendingSms): string {
  return `${incident.key}\u0000${incident.code}\u0000${sms.round}\u0000${sms.step}\u0000${sms.number}`;
}
