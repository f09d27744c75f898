// The escalation's incidents of one account: a pure state machine, no timer, no file, no Node-RED.
// Times inside a process are on the monotonic clock (a wall clock that steps would fire a step
// hours early or late); what is stored is wall-clock time, turned back into the monotonic clock at
// load as its age then plus the monotonic time elapsed since.
import { normalizeNumber } from '../../gateway/recipients';

/** Seconds a wait may last: 1 to 86,400 (a day). */
export const WAIT_BOUNDS = { min: 1, max: 86_400 } as const;
export const STEP_BOUNDS = { min: 1, max: 10 } as const;
export const REPEAT_BOUNDS = { min: 1, max: 10 } as const;
/**
 * A code is not given again within this long after its incident ended, so a late reply cannot acknowledge a newer
 * alarm.
 */
export const CODE_QUARANTINE_MS = 24 * 3600 * 1000;
export const DEFAULT_ACK_WORDS = ['OK', 'ACK'] as const;

export interface EscalationStep {
  /** Normalised numbers (digits). */
  numbers: string[];
  /** Seconds before the next step when nobody acknowledged. */
  wait: number;
}

/** A copy of the node's settings as they were when the incident was raised. */
export interface Policy {
  steps: EscalationStep[];
  repeat: number;
  text: string;
  ackWords: string[];
  sender_id: string;
  sender_id_value: string;
}

/** The most SMS one incident can send: the numbers of all steps times the rounds. */
export function mostSms(steps: readonly { numbers: readonly unknown[] }[], repeat: number): number {
  return steps.reduce((sum, step) => sum + step.numbers.length, 0) * repeat;
}

/** An SMS the chain hands on and whose answer is not yet recorded: after a crash it is sent again. */
export interface PendingSms {
  step: number;
  round: number;
  number: string;
  late: boolean;
}

export interface Incident {
  /** The node's id and the msg's topic. */
  key: string;
  node: string;
  topic: string;
  code: string;
  policy: Policy;
  /** The raising msg, as the outbox stores one (JSON). */
  msg: Record<string, unknown>;
  /** Monotonic ms. */
  raised: number;
  acknowledged?: { by: string; at: number };
  /** The next position of the chain (round * steps + step, from 0); all of them: the chain runs out at `due`. */
  position: number;
  /** Monotonic ms when the next position is due. */
  due: number;
  /** The next position came due while Node-RED was not running. */
  late: boolean;
  /** Numbers this incident has texted (normalised): only these can acknowledge it. */
  texted: string[];
  pending: PendingSms[];
}

export type Fired =
  | { kind: 'step'; incident: Incident; step: number; round: number; late: boolean; sms: PendingSms[] }
  | { kind: 'unacknowledged'; incident: Incident };

export type Ended = { incident: Incident; state: 'acknowledged' | 'resolved'; by: string; after: number };

/** Why a reply acknowledged nothing. */
type Ignored = { ignored: 'stranger' | 'unknown-code' | 'ambiguous' | 'no-code' | 'already' };

export type ReplyOutcome = { acknowledged: Ended } | Ignored;

/** The clock an engine reads: wall-clock ms for what is stored, monotonic ms for everything else. */
export interface EngineClock {
  wall(): number;
  mono(): number;
}

/** What is written: wall-clock times only. */
export interface StoredBook {
  version: 1;
  incidents: (Omit<Incident, 'raised' | 'due' | 'late' | 'acknowledged'> & {
    raisedAt: number;
    dueAt: number;
    acknowledged?: { by: string; atWall: number };
  })[];
  retired: { code: string; until: number }[];
  /** Retired codes whose chain ran out (nobody acknowledged): their SMS still kept in an outbox go. */
  ranOut?: string[];
}

function stepOf(policy: Policy, position: number): { index: number; round: number } {
  const n = policy.steps.length;
  return { index: position % n, round: Math.floor(position / n) + 1 };
}

function positions(policy: Policy): number {
  return policy.steps.length * policy.repeat;
}

function waitMs(policy: Policy, position: number): number {
  return (policy.steps[position % policy.steps.length] as EscalationStep).wait * 1000;
}

/** Words of a reply: letters and digits, any case. */
function wordsOf(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
}

export class IncidentBook {
  readonly #incidents = new Map<string, Incident>();
  /** Codes of ended incidents: monotonic ms until which they are not given again. */
  readonly #retired = new Map<string, number>();
  /** Those of the retired codes whose chain ran out. */
  readonly #ranOut = new Set<string>();

  constructor(private readonly random: () => number = Math.random) {}

  get incidents(): readonly Incident[] {
    return [...this.#incidents.values()];
  }

  get(key: string): Incident | undefined {
    return this.#incidents.get(key);
  }

  /** A new incident, or undefined when one with this key is open (acknowledged or not): nothing new starts. */
  raise(node: string, topic: string, policy: Policy, msg: Record<string, unknown>, now: number): Incident | undefined {
    const key = incidentKey(node, topic);
    if (this.#incidents.has(key)) return undefined;
    this.#forgetRetired(now);
    const incident = openIncident({ key, node, topic, code: this.#newCode(), policy, msg }, now);
    this.#incidents.set(key, incident);
    return incident;
  }

  /** A code of at least 2 digits, used by no open incident and by none that ended in the last 24 hours. */
  #newCode(): string {
    const taken = new Set([...[...this.#incidents.values()].map((i) => i.code), ...this.#retired.keys()]);
    for (let digits = 2; ; digits++) {
      const low = 10 ** (digits - 1);
      const span = 9 * low;
      // Mostly free: a few random draws; nearly full: the first free one from a random start.
      for (let tries = 0; tries < 20; tries++) {
        const code = String(low + Math.floor(this.random() * span));
        if (!taken.has(code)) return code;
      }
      const start = Math.floor(this.random() * span);
      for (let k = 0; k < span; k++) {
        const code = String(low + ((start + k) % span));
        if (!taken.has(code)) return code;
      }
    }
  }

  /**
   * What came due at `now` for the nodes given: one position per incident and call (call again
   * while it answers something). A step's numbers are texted and pending before it is answered.
   */
  due(now: number, attached: (node: string) => boolean): Fired[] {
    const fired: Fired[] = [];
    for (const incident of [...this.#incidents.values()]) {
      if (incident.acknowledged || !attached(incident.node) || incident.due > now) continue;
      const policy = incident.policy;
      if (incident.position >= positions(policy)) {
        this.#end(incident, now, true);
        fired.push({ kind: 'unacknowledged', incident });
        continue;
      }
      const { index, round } = stepOf(policy, incident.position);
      const late = incident.late;
      const sms = (policy.steps[index] as EscalationStep).numbers.map((number) => ({
        step: index + 1,
        round,
        number,
        late,
      }));
      for (const s of sms) if (!incident.texted.includes(s.number)) incident.texted.push(s.number);
      incident.pending.push(...sms);
      // Late: the next step is one wait after the late one fired; else one wait after it was due (no drift).
      incident.due = (late ? now : incident.due) + waitMs(policy, incident.position);
      incident.position++;
      incident.late = false;
      fired.push({ kind: 'step', incident, step: index + 1, round, late, sms });
    }
    return fired;
  }

  /**
   * The SMS's answer is recorded (taken, kept in the outbox, or failed for good): it is not sent again after a crash.
   */
  answered(key: string, sms: PendingSms | undefined, number?: string): void {
    const incident = this.#incidents.get(key);
    if (!incident) return;
    const at = sms
      ? incident.pending.findIndex((p) => p.step === sms.step && p.round === sms.round && p.number === sms.number)
      : -1;
    if (at >= 0) incident.pending.splice(at, 1);
    // The gateway's record names the number as it normalised it (with the account's default country): a reply comes
    // from that one.
    if (number) {
      const n = normalizeNumber(number);
      if (n && !incident.texted.includes(n)) incident.texted.push(n);
    }
  }

  /** The first acknowledgement wins; undefined: no open incident with this key, or acknowledged already. */
  acknowledge(key: string, by: string, now: number): Ended | undefined {
    const incident = this.#incidents.get(key);
    if (!incident || incident.acknowledged) return undefined;
    incident.acknowledged = { by, at: now };
    // Nothing more is sent for it: what was pending is withdrawn (or already with the gateway).
    incident.pending = [];
    return { incident, state: 'acknowledged', by, after: now - incident.raised };
  }

  resolve(key: string, now: number): Ended | undefined {
    const incident = this.#incidents.get(key);
    if (!incident) return undefined;
    this.#end(incident, now);
    return { incident, state: 'resolved', by: 'flow', after: now - incident.raised };
  }

  /** Ends a deleted node's incidents (nothing more is sent for them). */
  dropNode(node: string, now: number): Incident[] {
    const dropped = [...this.#incidents.values()].filter((i) => i.node === node);
    for (const incident of dropped) this.#end(incident, now);
    return dropped;
  }

  /** A reply (see {@link matchReply}) acknowledges the incident it names, first wins. */
  reply(fromRaw: string, text: string, now: number): ReplyOutcome {
    const match = matchReply(this.incidents, fromRaw, text);
    if ('ignored' in match) return match;
    return { acknowledged: this.acknowledge(match.incident.key, match.by, now) as Ended };
  }

  /**
   * Whether a chain SMS of the incident with this key and code, kept in an outbox, should still go:
   * while it escalates, and after its chain ran out (nobody acknowledged); not once it was
   * acknowledged, resolved or its node deleted, nor when it is unknown (ended over a day ago).
   */
  smsWanted(key: string, code: string): boolean {
    const open = this.#incidents.get(key);
    if (open?.code === code) return !open.acknowledged;
    return this.#ranOut.has(code);
  }

  #end(incident: Incident, now: number, ranOut = false): void {
    this.#incidents.delete(incident.key);
    this.#retired.set(incident.code, now + CODE_QUARANTINE_MS);
    if (ranOut) this.#ranOut.add(incident.code);
  }

  #forgetRetired(now: number): void {
    for (const [code, until] of this.#retired)
      if (until <= now) {
        this.#retired.delete(code);
        this.#ranOut.delete(code);
      }
  }

  /** Wall-clock times: a later process turns them back into its own monotonic clock. */
  stored(clock: EngineClock): StoredBook {
    const mono = clock.mono();
    const wall = clock.wall();
    const toWall = (at: number) => wall + (at - mono);
    this.#forgetRetired(mono);
    return {
      version: 1,
      incidents: [...this.#incidents.values()].map(({ raised, due, late: _late, acknowledged, ...rest }) => ({
        ...rest,
        raisedAt: toWall(raised),
        dueAt: toWall(due),
        ...(acknowledged ? { acknowledged: { by: acknowledged.by, atWall: toWall(acknowledged.at) } } : {}),
      })),
      retired: [...this.#retired].map(([code, until]) => ({ code, until: toWall(until) })),
      ...(this.#ranOut.size ? { ranOut: [...this.#ranOut] } : {}),
    };
  }

  /**
   * A book as a process loads it. A position that came due while Node-RED was not running fires
   * once, late; the ones missed before it are not replayed (nor is a run-out past its time
   * before the chain's end: it fires, with output 3).
   */
  static load(stored: StoredBook | undefined, clock: EngineClock, random?: () => number): IncidentBook {
    const book = new IncidentBook(random);
    if (!stored) return book;
    const mono = clock.mono();
    const wall = clock.wall();
    const toMono = (at: number) => mono + (at - wall);
    for (const s of stored.incidents) {
      const { raisedAt, dueAt, acknowledged, ...rest } = s;
      const incident: Incident = {
        ...rest,
        raised: toMono(raisedAt),
        due: toMono(dueAt),
        late: false,
        ...(acknowledged ? { acknowledged: { by: acknowledged.by, at: toMono(acknowledged.atWall) } } : {}),
      };
      if (!incident.acknowledged && incident.due <= mono) {
        const total = positions(incident.policy);
        while (incident.position < total && incident.due + waitMs(incident.policy, incident.position) <= mono) {
          incident.due += waitMs(incident.policy, incident.position);
          incident.position++;
        }
        incident.late = incident.position < total;
      }
      book.#incidents.set(incident.key, incident);
    }
    for (const r of stored.retired) if (toMono(r.until) > mono) book.#retired.set(r.code, toMono(r.until));
    for (const code of stored.ranOut ?? []) if (book.#retired.has(code)) book.#ranOut.add(code);
    return book;
  }
}

export function incidentKey(node: string, topic: string): string {
  return `${node}\u0000${topic}`;
}

/** A raised incident whose first step is due `at` (monotonic ms). */
export function openIncident(
  fields: Pick<Incident, 'key' | 'node' | 'topic' | 'code' | 'policy' | 'msg'>,
  at: number,
): Incident {
  return { ...fields, raised: at, position: 0, due: at, late: false, texted: [], pending: [] };
}

/** The earliest monotonic time something is due among the nodes given (undefined: nothing). */
export function nextDue(incidents: Iterable<Incident>, attached: (node: string) => boolean): number | undefined {
  let next: number | undefined;
  for (const i of incidents)
    if (!i.acknowledged && attached(i.node) && (next === undefined || i.due < next)) next = i.due;
  return next;
}

export function countIncidents(incidents: Iterable<Incident>, node?: string): { open: number; acknowledged: number } {
  let open = 0;
  let acknowledged = 0;
  for (const i of incidents) {
    if (node !== undefined && i.node !== node) continue;
    open++;
    if (i.acknowledged) acknowledged++;
  }
  return { open, acknowledged };
}

/**
 * Which incident a reply acknowledges, `by` its normalised number: its code as a word names the incident when `from` is
 * a number it texted; no code but an ack word (the whole text, any case, punctuation around it) names the only open,
 * unacknowledged incident that texted `from`.
 */
export function matchReply(
  incidents: readonly Incident[],
  fromRaw: string,
  text: string,
): { incident: Incident; by: string } | Ignored {
  const from = normalizeNumber(fromRaw);
  const words = wordsOf(text);
  const codes = words.filter((w) => /^\d+$/.test(w));
  if (codes.length) {
    const matching = incidents.filter((i) => codes.includes(i.code));
    if (!matching.length) return { ignored: 'unknown-code' };
    const texted = matching.filter((i) => i.texted.includes(from));
    if (!texted.length) return { ignored: 'stranger' };
    const open = texted.filter((i) => !i.acknowledged);
    if (!open.length) return { ignored: 'already' };
    if (open.length > 1) return { ignored: 'ambiguous' };
    return { incident: open[0] as Incident, by: from };
  }
  const texted = incidents.filter((i) => i.texted.includes(from));
  if (!texted.length) return { ignored: 'stranger' };
  if (words.length !== 1) return { ignored: 'no-code' };
  const word = (words[0] as string).toLowerCase();
  const open = texted.filter((i) => !i.acknowledged && i.policy.ackWords.some((w) => w.toLowerCase() === word));
  if (!open.length) return { ignored: texted.every((i) => i.acknowledged) ? 'already' : 'no-code' };
  if (texted.filter((i) => !i.acknowledged).length > 1) return { ignored: 'ambiguous' };
  return { incident: open[0] as Incident, by: from };
}
