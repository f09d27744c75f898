// An account's escalation incidents in its Redis store, shared by every copy of Node-RED on it. Each
// decision two copies could race on is one script (lua/escalation-*.lua), timed by the server's
// TIME: a raise (one incident per key), a step (fired by one copy), an acknowledgement or a resolve
// (output 2 at the one copy whose call won), the chain running out (output 3 likewise). Inside a
// process a server time is its age at the answer plus the monotonic time since: no copy's own wall
// clock takes part. Each copy looks at the open incidents every third of the claim time: it learns
// of the others' incidents and due steps, renews its claims on the SMS it is sending, and adopts
// those of a copy that is gone.
import { after, monotonicNow, normalizeNumber } from '../../gateway';
import {
  CODE_QUARANTINE_MS,
  countIncidents,
  incidentKey,
  matchReply,
  nextDue,
  openIncident,
  type Ended,
  type Incident,
  type PendingSms,
  type Policy,
  type ReplyOutcome,
} from './escalation';
import type { DeskHandler, IncidentDesk } from './escalation-desk';
import type { StoreCalls } from './store-scripts';

/** What a raise stores besides its key: the incident's node, topic, policy and raising msg. */
export type IncidentBody = Pick<Incident, 'node' | 'topic' | 'policy' | 'msg'>;

/** One open incident as a look finds it (times: the server's, ms). */
export interface SharedIncident {
  key: string;
  code: string;
  position: number;
  due: number;
  raised: number;
  acknowledged?: Incident['acknowledged'];
  body: IncidentBody;
  texted: string[];
  /** Pending SMS of a copy that is gone, claimed for this one by the look. */
  adopted: PendingSms[];
}

type StepAnswer =
  | { kind: 'refused'; now: number; due?: number }
  | { kind: 'step'; now: number; step: number; round: number; late: boolean; due: number; numbers: string[] }
  | { kind: 'ran-out' };

interface EndAnswer {
  code: string;
  now: number;
  raised: number;
  body: IncidentBody;
}

/** A pending SMS's field in the store: as escalation-step.lua names it. */
const smsField = (sms: PendingSms) => `${sms.round}:${sms.step}:${sms.number}`;

/** Random codes to try first, ten of each length from 2 digits to 4: mostly the first is free. */
function candidateCodes(): string[] {
  const codes: string[] = [];
  for (let digits = 2; digits <= 4; digits++) {
    const low = 10 ** (digits - 1);
    for (let i = 0; i < 10; i++) codes.push(String(low + Math.floor(Math.random() * 9 * low)));
  }
  return codes;
}

/** The escalation's scripts, called with the account's prefix (each builds its keys from it). */
export class RedisIncidents {
  constructor(
    private readonly client: () => StoreCalls,
    private readonly prefix: string,
    readonly copyId: string,
    /** How long a copy's claim on the SMS of a step lasts unless renewed. */
    readonly claimMs = 30_000,
    readonly quarantineMs = CODE_QUARANTINE_MS,
  ) {}

  /** The new incident's code; undefined: an incident with this key is open (at any copy). */
  async raise(key: string, body: IncidentBody): Promise<string | undefined> {
    const steps = body.policy.steps;
    const plan = { waits: steps.map((s) => s.wait), numbers: steps.map((s) => s.numbers), repeat: body.policy.repeat };
    const args = [key, body.node, JSON.stringify(body), JSON.stringify(plan), ...candidateCodes()];
    const [made, code] = (await this.client().run('escalationRaise', [this.prefix], args)) as [number, string];
    return Number(made) === 1 ? String(code) : undefined;
  }

  async step(code: string): Promise<StepAnswer> {
    const answer = (await this.client().run(
      'escalationStep',
      [this.prefix],
      [code, this.copyId, String(this.claimMs), String(this.quarantineMs)],
    )) as unknown[];
    const kind = Number(answer[0]);
    if (kind === 2) return { kind: 'ran-out' };
    if (kind === 1) {
      const [now, step, round, late, due] = answer.slice(1, 6).map(Number) as [number, number, number, number, number];
      return { kind: 'step', now, step, round, late: late === 1, due, numbers: answer.slice(6).map(String) };
    }
    // Refused: {0, its due or 0, now}.
    const due = Number(answer[1]);
    return { kind: 'refused', now: Number(answer[2]), ...(due > 0 ? { due } : {}) };
  }

  /**
   * Acknowledges (first wins) or ends the open incident with this key (and code, when given); undefined: nothing
   * changed.
   */
  async end(how: 'acknowledge' | 'resolve', key: string, by: string, code = ''): Promise<EndAnswer | undefined> {
    const answer = (await this.client().run(
      'escalationEnd',
      [this.prefix],
      [how, key, by, String(this.quarantineMs), code],
    )) as unknown[];
    if (Number(answer[0]) !== 1) return undefined;
    return {
      code: String(answer[1]),
      now: Number(answer[2]),
      raised: Number(answer[3]),
      body: JSON.parse(String(answer[4])) as IncidentBody,
    };
  }

  /**
   * The SMS's answer recorded (no copy sends it again); `number`: as the gateway wrote it, normalised (it may reply).
   */
  async answered(code: string, sms: PendingSms | undefined, number = ''): Promise<void> {
    await this.client().run('escalationAnswered', [this.prefix], [code, sms ? smsField(sms) : '', number]);
  }

  /** As IncidentBook.smsWanted says, on every copy's incidents: the store's answer now, not this copy's last look. */
  async wanted(key: string, code: string): Promise<boolean> {
    return Number(await this.client().run('escalationWanted', [this.prefix], [key, code])) === 1;
  }

  /**
   * Every open incident; renews this copy's claims on the SMS of the incidents `held`, adopts those a gone copy left.
   */
  async look(held: readonly string[]): Promise<{ now: number; incidents: SharedIncident[] }> {
    const flat = (await this.client().run(
      'escalationLook',
      [this.prefix],
      [this.copyId, String(this.claimMs), ...held],
    )) as unknown[];
    const incidents: SharedIncident[] = [];
    let at = 1;
    const next = () => flat[at++];
    while (at < flat.length) {
      const [key, code, , position, due, raised, by, ackAt, body] = Array.from({ length: 9 }, next).map(String);
      const texted = Array.from({ length: Number(next()) }, () => String(next()));
      const adopted = Array.from({ length: Number(next()) }, () => String(next()));
      try {
        incidents.push({
          key,
          code,
          position: Number(position),
          due: Number(due),
          raised: Number(raised),
          ...(by ? { acknowledged: { by, at: Number(ackAt) } } : {}),
          body: JSON.parse(body) as IncidentBody,
          texted,
          adopted: adopted.map((line) => JSON.parse(line) as PendingSms),
        });
      } catch {
        // A damaged incident is skipped.
      }
    }
    return { now: Number(flat[0]), incidents };
  }
}

/** The incidents of one account on its Redis store, as this copy sees and moves them (see the top of this file). */
export class SharedEscalationDesk implements IncidentDesk {
  readonly state = { where: 'the shared store' };
  readonly loadError = undefined;
  readonly ready: Promise<void>;
  readonly #handlers = new Map<string, DeskHandler>();
  /** The open incidents as the last answers showed them, by code. */
  #known = new Map<string, Incident>();
  /** Counts this copy's own changes: a look answered after one does not overwrite it with what it saw before. */
  #changes = 0;
  /** The SMS this copy handed on and whose answers are not recorded, by code: its claims on them are renewed. */
  readonly #held = new Map<string, Set<string>>();
  #cancel: (() => void) | undefined;
  #poll: NodeJS.Timeout | undefined;
  #firing = false;
  #closed = false;

  constructor(private readonly store: RedisIncidents) {
    this.ready = this.#look().then(
      () => undefined,
      () => this.#lookSoon(),
    );
  }

  /**
   * The store not connected yet (Node-RED is starting): looked at again shortly, not a look's time later, so a step
   * that came due meanwhile is not held up.
   */
  #lookSoon(): void {
    const timer = setTimeout(() => {
      if (!this.#closed) this.#look().catch(() => this.#lookSoon());
    }, 500);
    timer.unref?.();
  }

  /** A look at most this far apart: well within a claim's life, so this copy's claims do not lapse while it lives. */
  get lookEveryMs(): number {
    return Math.max(100, Math.floor(this.store.claimMs / 3));
  }

  attach(node: string, handler: DeskHandler): () => void {
    this.#handlers.set(node, handler);
    if (!this.#poll && !this.#closed) {
      this.#poll = setInterval(() => void this.#look().catch(() => undefined), this.lookEveryMs);
      this.#poll.unref?.();
    }
    void this.ready.then(() => this.#arm());
    return () => {
      if (this.#handlers.get(node) === handler) this.#handlers.delete(node);
      if (!this.#handlers.size) {
        clearInterval(this.#poll);
        this.#poll = undefined;
      }
      this.#arm();
    };
  }

  async raise(
    node: string,
    topic: string,
    policy: Policy,
    msg: Record<string, unknown>,
  ): Promise<Incident | undefined> {
    await this.ready;
    const key = incidentKey(node, topic);
    const code = await this.store.raise(key, { node, topic, policy, msg });
    if (!code) {
      // Open at another copy perhaps: this one learns of it (its steps, its status) now.
      void this.#look().catch(() => undefined);
      return undefined;
    }
    const incident = openIncident({ key, node, topic, code, policy, msg }, monotonicNow());
    this.#changes++;
    this.#known.set(code, incident);
    this.#arm();
    return incident;
  }

  acknowledge(key: string, by: string): Promise<Ended | undefined> {
    return this.#end('acknowledge', key, by, '', true);
  }

  resolve(key: string): Promise<Ended | undefined> {
    return this.#end('resolve', key, 'flow', '', true);
  }

  /**
   * Decided by the engine's rules on every copy's open incidents as the store holds them now; then acknowledged there
   * (first wins).
   */
  async reply(from: string, text: string): Promise<ReplyOutcome> {
    await this.ready;
    const match = matchReply(await this.#look(), from, text);
    if ('ignored' in match) return match;
    const ended = await this.#end('acknowledge', match.incident.key, match.by, match.incident.code, true);
    return ended ? { acknowledged: ended } : { ignored: 'already' };
  }

  async answered(incident: Incident, sms: PendingSms, number?: string): Promise<void> {
    const held = this.#held.get(incident.code);
    held?.delete(smsField(sms));
    if (held && !held.size) this.#held.delete(incident.code);
    const normalised = number ? normalizeNumber(number) : '';
    const known = this.#known.get(incident.code);
    if (known && normalised && !known.texted.includes(normalised)) known.texted.push(normalised);
    await this.store.answered(incident.code, sms, normalised);
  }

  texted(key: string, number: string): void {
    const incident = [...this.#known.values()].find((i) => i.key === key);
    if (!incident) return;
    const normalised = normalizeNumber(number);
    if (!incident.texted.includes(normalised)) incident.texted.push(normalised);
    this.store.answered(incident.code, undefined, normalised).catch(() => undefined);
  }

  stillEscalating(incident: Incident): boolean {
    const known = this.#known.get(incident.code);
    return !this.#closed && known !== undefined && known.key === incident.key && !known.acknowledged;
  }

  stillWanted(key: string, code: string): Promise<boolean> {
    return this.store.wanted(key, code);
  }

  /** A deleted node: its open incidents end at every copy (nothing more is sent for them); no output. */
  async dropNode(node: string): Promise<Incident[]> {
    await this.ready;
    await this.#look().catch(() => undefined);
    const dropped: Incident[] = [];
    for (const incident of [...this.#known.values()].filter((i) => i.node === node)) {
      const ended = await this.#end('resolve', incident.key, 'flow', incident.code, false);
      if (ended) dropped.push(ended.incident);
    }
    return dropped;
  }

  counts(node?: string): { open: number; acknowledged: number } {
    return countIncidents(this.#known.values(), node);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancel?.();
    this.#cancel = undefined;
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  /** Server times as this process's monotonic clock: their age at the answer, plus the time since. */
  #clock(serverNow: number): (server: number) => number {
    const at = monotonicNow();
    return (server) => at - (serverNow - server);
  }

  async #end(
    how: 'acknowledge' | 'resolve',
    key: string,
    by: string,
    code: string,
    tell: boolean,
  ): Promise<Ended | undefined> {
    await this.ready;
    const answer = await this.store.end(how, key, by, code);
    if (!answer) return undefined;
    const toMono = this.#clock(answer.now);
    const { node, topic, policy, msg } = answer.body;
    const incident = this.#known.get(answer.code) ?? {
      ...openIncident({ key, node, topic, code: answer.code, policy, msg }, toMono(answer.raised)),
      due: Infinity,
    };
    this.#changes++;
    // Its pending SMS were dropped with it: no claim of this copy's to renew.
    this.#held.delete(answer.code);
    if (how === 'acknowledge') {
      incident.acknowledged = { by, at: toMono(answer.now) };
      this.#known.set(answer.code, incident);
    } else this.#known.delete(answer.code);
    this.#arm();
    const ended: Ended = {
      incident,
      state: how === 'acknowledge' ? 'acknowledged' : 'resolved',
      by,
      after: answer.now - answer.raised,
    };
    if (tell) this.#handlers.get(node)?.ended(ended);
    return ended;
  }

  /**
   * Looks at the store; what this copy knew is replaced by it unless this copy changed something meanwhile. Answers the
   * open incidents it found.
   */
  async #look(): Promise<Incident[]> {
    const changes = this.#changes;
    const answer = await this.store.look([...this.#held.keys()]);
    const toMono = this.#clock(answer.now);
    const incidents = answer.incidents.map((s): Incident => ({
      ...openIncident({ key: s.key, code: s.code, ...s.body }, toMono(s.raised)),
      position: s.position,
      due: toMono(s.due),
      texted: s.texted,
      ...(s.acknowledged ? { acknowledged: { by: s.acknowledged.by, at: toMono(s.acknowledged.at) } } : {}),
    }));
    if (this.#closed) return incidents;
    const known = new Map<string, Incident>();
    const adopted: [DeskHandler, Incident, PendingSms[]][] = [];
    answer.incidents.forEach((s, n) => {
      const incident = incidents[n] as Incident;
      known.set(s.code, incident);
      const handler = this.#handlers.get(incident.node);
      // Not attached here: the claim is not renewed, and lapses to a copy (or to this one later) that has the node.
      if (!handler || !s.adopted.length) return;
      const fresh = s.adopted.filter((sms) => !this.#held.get(s.code)?.has(smsField(sms)));
      if (!fresh.length) return;
      this.#hold(s.code, fresh);
      adopted.push([handler, incident, fresh]);
    });
    if (changes === this.#changes) {
      // Acknowledged or ended at another copy since the last look: what this copy still has queued for it is withdrawn.
      for (const [code, before] of this.#known) {
        const after = known.get(code);
        if (!before.acknowledged && (!after || after.acknowledged))
          this.#handlers.get(before.node)?.withdrawn?.(before);
      }
      this.#known = known;
    }
    // Known before they are sent: the node sends only for an incident still escalating.
    for (const [, incident] of adopted) if (!this.#known.has(incident.code)) this.#known.set(incident.code, incident);
    for (const [handler, incident, sms] of adopted) handler.resume(this.#known.get(incident.code) ?? incident, sms);
    this.#arm();
    return incidents;
  }

  /** SMS this copy handed on: its claims on them are renewed at each look until their answers are recorded. */
  #hold(code: string, sms: readonly PendingSms[]): void {
    const held = this.#held.get(code) ?? new Set<string>();
    for (const s of sms) held.add(smsField(s));
    this.#held.set(code, held);
  }

  #arm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    if (this.#closed) return;
    const next = nextDue(this.#known.values(), (node) => this.#handlers.has(node));
    // Infinity: refused by the store, known again at the next look.
    if (next === undefined || next === Infinity) return;
    this.#cancel = after(next - monotonicNow(), () => {
      this.#cancel = undefined;
      void this.#fire();
    });
  }

  /**
   * Each due incident's next step, claimed at the store: taken here, or refused (another copy took it, or it was
   * acknowledged).
   */
  async #fire(): Promise<void> {
    if (this.#firing) return;
    this.#firing = true;
    let relook = false;
    try {
      const now = monotonicNow();
      const due = [...this.#known.values()].filter(
        (i) => !i.acknowledged && this.#handlers.has(i.node) && i.due <= now,
      );
      for (const incident of due) {
        let answer: StepAnswer;
        try {
          answer = await this.store.step(incident.code);
        } catch {
          // The store does not answer: tried again after a look's time (the store's time decides then).
          incident.due = monotonicNow() + this.lookEveryMs;
          continue;
        }
        this.#took(incident, answer);
        if (answer.kind === 'refused' && answer.due === undefined) relook = true;
      }
    } finally {
      this.#firing = false;
      this.#arm();
    }
    // Acknowledged or ended at another copy: what this copy shows and times is brought up to date.
    if (relook) await this.#look().catch(() => undefined);
  }

  #took(incident: Incident, answer: StepAnswer): void {
    if (answer.kind === 'refused') {
      // Not due yet by the store's clock, or not this copy's: it waits for the due time, or for the next look.
      incident.due = answer.due === undefined ? Infinity : this.#clock(answer.now)(answer.due);
      return;
    }
    this.#changes++;
    const handler = this.#handlers.get(incident.node);
    if (answer.kind === 'ran-out') {
      this.#known.delete(incident.code);
      this.#held.delete(incident.code);
      handler?.fired({ kind: 'unacknowledged', incident });
      return;
    }
    incident.position++;
    incident.due = this.#clock(answer.now)(answer.due);
    const sms = answer.numbers.map((number) => ({ step: answer.step, round: answer.round, number, late: answer.late }));
    for (const s of sms) if (!incident.texted.includes(s.number)) incident.texted.push(s.number);
    // Its node went away meanwhile: the claim is not renewed, and another look adopts the SMS.
    if (!handler) return;
    this.#hold(incident.code, sms);
    handler.fired({ kind: 'step', incident, step: answer.step, round: answer.round, late: answer.late, sms });
  }
}
