/**
 * Errors in the user's language: a Node-RED started in German or Czech (its `lang` from LANG)
 * shows a check's error at a Catch node and in its log in that language, naming the field and the
 * limit; in English it reads as the standalone client's message. And every sentence an error can
 * carry exists in each catalog with the same parameters.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_WORDING, SCHEMAS } from '../gateway/schemas';
import { ERRORS } from '../gateway/wording';
import { TRACKING_LOG } from '../nodes/account/tracking-file';
import { expiredError, fullError, giveUpError, type OutboxEntry } from '../nodes/account/outbox';
import { lockedError } from '../nodes/account/outbox-journal';
import { NO_ACCOUNT, sentenceOf } from '../nodes/plumbing/runtime';
import { NODE_ERRORS, nodeWording } from '../nodes/plumbing/wording';
import { policyOf } from '../nodes/behaviours/escalation-node';
import { appendLinesNode, nodeRedProcess } from './support/node-red-process';
import { until } from './support/wait';

const LOCALES = join(__dirname, '..', '..', 'locales');

/** Every sentence an error can carry: the client's and the nodes' own (one catalog section, so no key in both). */
const ALL_ERRORS = { ...ERRORS, ...NODE_ERRORS };

type Section = { [key: string]: string | Section };

/** Each key of a section (nested keys dotted) with the sorted names of its `__parameters__`. */
function keysAndParams(section: Section, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(section)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string')
      out.set(path, [...new Set([...value.matchAll(/__(\w+)__/g)].map((m) => m[1]))].sort().join());
    else for (const [k, v] of keysAndParams(value, path)) out.set(k, v);
  }
  return out;
}

/** What is wrong with the catalogs' `section` (errors, tracking) against the English sentences the code carries. */
function catalogProblems(
  catalogs: Record<string, Record<string, Section>>,
  section = 'errors',
  english: object = ALL_ERRORS,
): string[] {
  const problems: string[] = [];
  const wanted = keysAndParams(english as Section);
  for (const [lang, catalog] of Object.entries(catalogs)) {
    const found = keysAndParams(catalog[section] ?? {});
    for (const [key, params] of wanted) {
      if (!found.has(key)) problems.push(`${lang}: ${section}.${key} missing`);
      else if (found.get(key) !== params)
        problems.push(`${lang}: ${section}.${key} has parameters ${found.get(key)}, the English ${params}`);
    }
    for (const key of found.keys())
      if (!wanted.has(key)) problems.push(`${lang}: ${section}.${key} is no sentence the code carries`);
  }
  return problems;
}

const readCatalogs = (): Record<string, Record<string, Section>> =>
  Object.fromEntries(
    readdirSync(LOCALES, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => [e.name, JSON.parse(readFileSync(join(LOCALES, e.name, 'shared.json'), 'utf8'))]),
  );

describe("errors in the user's language", function () {
  this.timeout(120_000);

  it('every sentence an error can carry is in each catalog, with the same parameters; en-US is the client’s English', () => {
    const catalogs = readCatalogs();
    assert.deepEqual(Object.keys(catalogs).sort(), ['cs', 'de', 'en-US']);
    assert.deepEqual(catalogProblems(catalogs), []);
    assert.deepEqual(catalogProblems(catalogs, 'tracking', TRACKING_LOG), []);
    // The en-US catalog says what the standalone client (and the tracking file) say, word for word.
    assert.deepEqual(
      Object.keys(NODE_ERRORS).filter((key) => key in ERRORS),
      [],
    );
    assert.deepEqual(catalogs['en-US']?.errors, ALL_ERRORS);
    assert.deepEqual(catalogs['en-US']?.tracking, TRACKING_LOG);
  });

  it("every schema rule carries its wording (a check's error names the rule in the user's language)", () => {
    const unworded: string[] = [];
    const walk = (schema: unknown, path: string) => {
      if (Array.isArray(schema)) schema.forEach((s, i) => walk(s, `${path}/${i}`));
      else if (schema && typeof schema === 'object') {
        const { rule } = schema as { rule?: unknown };
        if (typeof rule === 'string' && !RULE_WORDING.has(rule)) unworded.push(`${path}: ${rule}`);
        for (const [key, value] of Object.entries(schema)) walk(value, `${path}/${key}`);
      }
    };
    for (const [key, schema] of Object.entries(SCHEMAS)) walk(schema, key);
    assert.deepEqual(unworded, []);
  });

  it('the check fails on a key missing from de and on a parameter dropped in cs (negative control)', () => {
    const catalogs = readCatalogs();
    const de = catalogs.de?.errors as Section;
    delete de['text-too-long'];
    const cs = catalogs.cs?.errors as Section;
    cs['not-boolean'] = 'musí být true nebo false';
    // The nodes' own sentences too.
    delete de['no-number'];
    cs['one-phone'] = '__field__ musí být jediné telefonní číslo';
    assert.deepEqual(catalogProblems(catalogs).sort(), [
      'cs: errors.not-boolean has parameters , the English field',
      'cs: errors.one-phone has parameters field, the English field,numbers',
      'de: errors.no-number missing',
      'de: errors.text-too-long missing',
    ]);
  });

  it('Node-RED started with LANG=de_DE.UTF-8: a send with no number reaches a Catch node in German, naming the field and where it read', async () => {
    const copy = nodeRedProcess('bulkgate-error-language-');
    const caught = join(copy.userDir, 'caught.txt');
    copy.flows(
      [
        { id: 'tab', type: 'tab', label: 'errors' },
        { id: 'acc', type: 'bulkgate-account', name: 'home', baseUrl: 'http://127.0.0.1:9', retries: 0 },
        // No msg.number: the node's check refuses the msg before a request exists.
        {
          id: 'alarm',
          z: 'tab',
          type: 'inject',
          props: [{ p: 'payload' }],
          payload: 'fits',
          payloadType: 'str',
          wires: [['t']],
        },
        { id: 't', z: 'tab', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
        { id: 'c', z: 'tab', type: 'catch', scope: ['t'], uncaught: false, wires: [['f']] },
        {
          id: 'f',
          z: 'tab',
          type: 'function',
          func: 'msg.payload = msg.error.message; return msg;',
          outputs: 1,
          wires: [['w']],
        },
        appendLinesNode('w', caught),
      ],
      { acc: { application_id: '1', application_token: 'error-language-token' } },
    );
    try {
      const editor = await copy.start({ env: { LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8' } });
      assert.equal((await fetch(`${editor}/inject/alarm`, { method: 'POST' })).status, 200);
      const lines = () => (existsSync(caught) ? readFileSync(caught, 'utf8').split('\n').filter(Boolean) : []);
      await until('the Catch node wrote what it caught', () => lines().length > 0).catch(() => undefined);
      assert.deepEqual(
        lines(),
        [
          'keine Nummer: das Feld Empfänger liest msg.number (füllen Sie es oder wählen Sie im Node eine andere Eigenschaft)',
        ],
        copy.output(),
      );
    } finally {
      await copy.remove();
    }
  });

  it("Node-RED started with LANG=cs_CZ.UTF-8: an account's base URL and store URL that cannot be used reach a Catch node in Czech, naming the setting and the rule", async () => {
    const copy = nodeRedProcess('bulkgate-error-language-');
    const caught = join(copy.userDir, 'caught.txt');
    copy.flows(
      [
        { id: 'tab', type: 'tab', label: 'errors' },
        // Plain http to another machine: the token would travel in the clear. (No id equal to a name: Node-RED reads that as a dependency.)
        { id: 'acc-web', type: 'bulkgate-account', name: 'web', baseUrl: 'http://example.com', retries: 0 },
        // A shared store whose URL carries a password (it would sit in the flows file).
        {
          id: 'acc-shared',
          type: 'bulkgate-account',
          name: 'shared',
          baseUrl: 'http://127.0.0.1:9',
          store: 'redis',
          storeUrl: 'redis://:secret@127.0.0.1:6379',
          retries: 0,
        },
        {
          id: 'alarm',
          z: 'tab',
          type: 'inject',
          props: [{ p: 'payload' }],
          payload: 'fits',
          payloadType: 'str',
          wires: [['t1']],
        },
        {
          id: 'alarm2',
          z: 'tab',
          type: 'inject',
          props: [{ p: 'payload' }],
          payload: 'fits',
          payloadType: 'str',
          wires: [['t2']],
        },
        {
          id: 't1',
          z: 'tab',
          type: 'bulkgate-transactional',
          account: 'acc-web',
          number: '420777777777',
          numberType: 'str',
          wires: [[], []],
        },
        {
          id: 't2',
          z: 'tab',
          type: 'bulkgate-transactional',
          account: 'acc-shared',
          number: '420777777777',
          numberType: 'str',
          wires: [[], []],
        },
        { id: 'c', z: 'tab', type: 'catch', scope: ['t1', 't2'], uncaught: false, wires: [['f']] },
        {
          id: 'f',
          z: 'tab',
          type: 'function',
          func: 'msg.payload = msg.error.message; return msg;',
          outputs: 1,
          wires: [['w']],
        },
        appendLinesNode('w', caught),
      ],
      {
        'acc-web': { application_id: '1', application_token: 'error-language-token' },
        'acc-shared': { application_id: '1', application_token: 'error-language-token' },
      },
    );
    try {
      const editor = await copy.start({ env: { LANG: 'cs_CZ.UTF-8', LC_ALL: 'cs_CZ.UTF-8' } });
      const lines = () => (existsSync(caught) ? readFileSync(caught, 'utf8').split('\n').filter(Boolean) : []);
      assert.equal((await fetch(`${editor}/inject/alarm`, { method: 'POST' })).status, 200);
      await until('the Catch node wrote the first', () => lines().length > 0).catch(() => undefined);
      assert.equal((await fetch(`${editor}/inject/alarm2`, { method: 'POST' })).status, 200);
      await until('the Catch node wrote the second', () => lines().length > 1).catch(() => undefined);
      assert.deepEqual(
        lines(),
        [
          'základní URL (baseUrl) musí začínat https:// (prosté http:// jen pro adresy tohoto počítače, například simulátor); otevřete účet BulkGate "web" a nastavte ho',
          'adresa úložiště (storeUrl) nesmí obsahovat heslo: to patří do pole „Heslo úložiště“ účtu (uložené s přihlašovacími údaji); otevřete účet BulkGate "shared" a nastavte ho',
        ],
        copy.output(),
      );
      assert.doesNotMatch(copy.output(), /secret/);
    } finally {
      await copy.remove();
    }
  });

  it("a failure below the package is worded by its code: the disk's, the network's, the store's; an unknown one keeps its words", () => {
    const de = catalogOf('de');
    const fault = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
    const worded = (error: unknown) => sentenceOf(de, error);
    assert.equal(
      worded(fault("ENOSPC: no space left on device, write '/data/x'", 'ENOSPC')),
      'kein Platz mehr auf dem Datenträger (ENOSPC)',
    );
    assert.equal(worded(fault("EACCES: permission denied, open '/data/x'", 'EACCES')), 'keine Berechtigung (EACCES)');
    assert.equal(
      worded(fault('EROFS: read-only file system', 'EROFS')),
      'das Dateisystem ist schreibgeschützt (EROFS)',
    );
    assert.equal(
      worded(fault('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED')),
      'Verbindung abgelehnt (ECONNREFUSED)',
    );
    assert.equal(worded(fault('getaddrinfo ENOTFOUND redis.local', 'ENOTFOUND')), 'Host nicht gefunden (ENOTFOUND)');
    assert.equal(
      worded(fault('WRONGPASS invalid username-password pair or user is disabled.')),
      'Benutzer oder Passwort abgelehnt (WRONGPASS)',
    );
    assert.equal(
      worded(fault('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN')),
      'Zertifikat abgelehnt (SELF_SIGNED_CERT_IN_CHAIN)',
    );
    assert.equal(worded(fault('Connection timeout', undefined)), 'Connection timeout');
    assert.equal(worded('something odd'), 'something odd');
  });

  it('Node-RED started with LANG=de_DE.UTF-8: what failed below the package (a store nobody listens at, an outbox folder that is a file) reads in German in the log and at Catch, with its code', async () => {
    const copy = nodeRedProcess('bulkgate-error-language-');
    const caught = join(copy.userDir, 'caught.txt');
    // The outbox's folder taken by a file: a msg that must wait cannot be kept.
    writeFileSync(join(copy.userDir, 'bulkgate-outbox'), 'not a folder');
    copy.flows(
      [
        { id: 'tab', type: 'tab', label: 'errors' },
        { id: 'acc-home', type: 'bulkgate-account', name: 'home', baseUrl: 'http://127.0.0.1:9', retries: 0 },
        {
          id: 'acc-shared',
          type: 'bulkgate-account',
          name: 'shared',
          baseUrl: 'http://127.0.0.1:9',
          store: 'redis',
          storeUrl: 'redis://127.0.0.1:1',
          retries: 0,
        },
        {
          id: 'alarm',
          z: 'tab',
          type: 'inject',
          props: [{ p: 'payload' }],
          payload: 'fits',
          payloadType: 'str',
          wires: [['t']],
        },
        {
          id: 't',
          z: 'tab',
          type: 'bulkgate-transactional',
          account: 'acc-home',
          number: '420777777777',
          numberType: 'str',
          wires: [[], []],
        },
        {
          id: 't2',
          z: 'tab',
          type: 'bulkgate-transactional',
          account: 'acc-shared',
          number: '420777777777',
          numberType: 'str',
          wires: [[], []],
        },
        { id: 'c', z: 'tab', type: 'catch', scope: ['t'], uncaught: false, wires: [['f']] },
        {
          id: 'f',
          z: 'tab',
          type: 'function',
          func: 'msg.payload = msg.error.message; return msg;',
          outputs: 1,
          wires: [['w']],
        },
        appendLinesNode('w', caught),
      ],
      {
        'acc-home': { application_id: '1', application_token: 'error-language-token' },
        'acc-shared': { application_id: '1', application_token: 'error-language-token' },
      },
    );
    try {
      const editor = await copy.start({ env: { LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8' } });
      const store = 'Der gemeinsame Speicher ist nicht erreichbar (Verbindung abgelehnt (ECONNREFUSED))';
      await until('the store line in the log', () => copy.output().includes(store)).catch(() => undefined);
      assert.ok(copy.output().includes(store), `${store}\n${copy.output()}`);
      assert.equal((await fetch(`${editor}/inject/alarm`, { method: 'POST' })).status, 200);
      const lines = () => (existsSync(caught) ? readFileSync(caught, 'utf8').split('\n').filter(Boolean) : []);
      await until('the Catch node wrote what it caught', () => lines().length > 0).catch(() => undefined);
      assert.match(
        lines()[0] ?? copy.output(),
        /^Nicht aufbewahrt: die Postausgangsdatei .*bulkgate-outbox.* konnte nicht geschrieben werden \(ein Ordner im Pfad fehlt oder ist eine Datei \((ENOTDIR|EEXIST)\)\);/,
      );
      assert.doesNotMatch(copy.output() + lines().join('\n'), /nothing listening|not a directory|file already exists/);
    } finally {
      await copy.remove();
    }
  });

  /** A catalog as Node-RED's i18next reads it for `errors.*`: the key's text, its `__name__` filled. */
  const catalogOf = (lang: string) => {
    const root = JSON.parse(readFileSync(join(LOCALES, lang, 'shared.json'), 'utf8')) as Section;
    return (key: string, params?: Record<string, string | number>): string => {
      let text: Section | string | undefined = root;
      for (const part of key.split('.')) text = typeof text === 'object' ? text[part] : undefined;
      return typeof text === 'string'
        ? text.replace(/__(\w+)__/g, (whole, name: string) => String(params?.[name] ?? whole))
        : key;
    };
  };

  it("the account's errors (outbox, rate limit, no account) are worded from the catalog: in German, and in en-US the English message", () => {
    const entry = { attempts: 3, since: 0, reason: 'HTTP 503' } as OutboxEntry;
    const errors = [
      expiredError(entry, 5),
      fullError(3, 'home'),
      lockedError('/u/outbox'),
      giveUpError(90, nodeWording('reason.rate-wait')),
      NO_ACCOUNT(),
    ];
    assert.deepEqual(
      errors.map((e) => sentenceOf(catalogOf('de'), e)),
      [
        'Nicht gesendet: das Gateway war 5 Minuten lang nicht erreichbar (Postausgangszeit des Kontos; 3 Versuche). Zuletzt: HTTP 503',
        'Nicht aufbewahrt: im Postausgang des BulkGate-Kontos "home" warten schon 3 Nachrichten auf das Gateway (Einstellung „Postausgang bis“ des Kontos)',
        'Nicht aufbewahrt: eine andere Node-RED-Instanz hält die Postausgangsdatei /u/outbox (zwei Node-RED-Instanzen in einem Benutzerverzeichnis); diese Nachricht konnte nicht auf das Gateway warten',
        'Nicht innerhalb von 90 s gesendet („Aufgeben nach“ des Nodes): sie wartete auf das Ratenlimit des Kontos',
        'In diesem Node ist kein BulkGate-Konto gewählt: Öffnen Sie ihn und wählen Sie eines (oder legen Sie mit dem Stift-Knopf eines an)',
      ],
    );
    assert.deepEqual(
      errors.map((e) => sentenceOf(catalogOf('en-US'), e)),
      errors.map((e) => e.message),
    );
  });

  it("the escalation's chain checks read in German and Czech, naming the step, the value and the bounds", () => {
    const refusal = (config: Record<string, unknown>) => {
      try {
        policyOf({ steps: [{ numbers: '420777123456', wait: 60 }], repeat: 1, ...config } as never);
      } catch (error) {
        return error;
      }
      return assert.fail(`${JSON.stringify(config)} must be refused`);
    };
    const errors = [
      refusal({ steps: [] }),
      refusal({ steps: Array.from({ length: 11 }, () => ({ numbers: '420777123456', wait: 60 })) }),
      refusal({ steps: [{ numbers: '12ab', wait: 60 }] }),
      refusal({ steps: [{ numbers: '420777123456', wait: 0 }] }),
      refusal({ repeat: 11 }),
    ];
    assert.deepEqual(
      errors.map((e) => sentenceOf(catalogOf('de'), e)),
      [
        'Stufen: Die Kette hat keine Stufe (erlaubt sind 1 bis 10)',
        'Stufen: Die Kette hat 11 Stufen; erlaubt sind höchstens 10',
        'Stufen: Stufe 1 enthält eine ungültige Nummer: 12ab',
        'Stufen: Die Wartezeit von Stufe 1 ist 0; sie muss eine ganze Zahl von Sekunden zwischen 1 und 86400 sein',
        'Die Zahl der Durchläufe (repeat) muss eine ganze Zahl von 1 bis 10 sein, nicht 11',
      ],
    );
    assert.deepEqual(
      errors.map((e) => sentenceOf(catalogOf('cs'), e)),
      [
        'kroky: řetězec nemá žádný krok (povoleno je 1 až 10)',
        'kroky: řetězec má 11 kroků; povoleno je nejvýš 10',
        'kroky: krok 1 obsahuje neplatné číslo: 12ab',
        'kroky: krok 1 má čekání 0; čekání musí být celý počet sekund od 1 do 86400',
        'počet kol (repeat) musí být celé číslo od 1 do 10, ne 11',
      ],
    );
    assert.deepEqual(
      errors.map((e) => sentenceOf(catalogOf('en-US'), e)),
      errors.map((e) => (e as Error).message),
    );
  });

  it('no error in the nodes is built from an English sentence alone (each carries a wording key); a planted one is found', () => {
    const NODES = join(__dirname, '..', '..', 'nodes');
    // An error built from a message: a check's `invalidRequest(`...`)` or a `new GatewayError({... message` outside the wording helpers.
    const englishOnly = (source: string) => /invalidRequest\(\s*[`'"]|new GatewayError\(\{[^}]*\bmessage:/.test(source);
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? e.name === 'editor'
            ? []
            : sources(join(dir, e.name))
          : e.name.endsWith('.ts')
            ? [join(dir, e.name)]
            : [],
      );
    const files = sources(NODES).filter((file) => !file.endsWith(join('plumbing', 'wording.ts')));
    assert.ok(files.length > 20, files.join());
    assert.deepEqual(
      files.filter((file) => englishOnly(readFileSync(file, 'utf8'))),
      [],
    );
    assert.ok(englishOnly('throw invalidRequest(`threshold must be a number, got ${x}`);'));
    assert.ok(englishOnly("new GatewayError({ type: 'closed', retryable: true, message: `Not sent: ${reason}` })"));
  });

  const LONG = 'x'.repeat(640);
  for (const [locale, expected, unreachable, damaged] of [
    [
      'de_DE.UTF-8',
      'text hat 640 Zeichen; erlaubt sind höchstens 612 (mit Unicode 268)',
      'Das Gateway unter http://127.0.0.1:9 ist nicht erreichbar (ECONNREFUSED)',
      'beschädigte Zeilen übersprungen: 1',
    ],
    [
      'cs_CZ.UTF-8',
      'text má 640 znaků; povoleno je nejvýše 612 (s Unicode 268)',
      'Brána na http://127.0.0.1:9 je nedostupná (ECONNREFUSED)',
      'přeskočeno poškozených řádků: 1',
    ],
    [
      'en_US.UTF-8',
      'text is 640 characters; the limit is 612 (268 with Unicode)',
      'Could not reach the gateway at http://127.0.0.1:9 (ECONNREFUSED)',
      '1 damaged line(s) skipped',
    ],
  ] as const) {
    it(`Node-RED started with LANG=${locale}: a too-long text's error at a Catch node and in the log reads "${expected}"; the causes in the log lines and the tracking file's lines in the same language`, async () => {
      const copy = nodeRedProcess('bulkgate-error-language-');
      const caught = join(copy.userDir, 'caught.txt');
      // A tracking file with a damaged line: the events node's account reads it, and says so in the log.
      const tracking = join(copy.userDir, 'bulkgate-tracking', 'acc.jsonl');
      mkdirSync(join(copy.userDir, 'bulkgate-tracking'));
      writeFileSync(tracking, 'not a line of the tracking file\n');
      copy.flows(
        [
          { id: 'tab', type: 'tab', label: 'errors' },
          // Nothing is sent: the check refuses the text before a request exists.
          { id: 'acc', type: 'bulkgate-account', name: 'home', baseUrl: 'http://127.0.0.1:9', retries: 0 },
          {
            id: 'alarm',
            z: 'tab',
            type: 'inject',
            props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
            payload: LONG,
            payloadType: 'str',
            wires: [['t', 'uncaught']],
          },
          // A text that fits, for a gateway nobody answers at: the account's log line names the cause.
          {
            id: 'short',
            z: 'tab',
            type: 'inject',
            props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
            payload: 'fits',
            payloadType: 'str',
            wires: [['t']],
          },
          { id: 'e', z: 'tab', type: 'bulkgate-events', account: 'acc', path: '/error-language', wires: [[], [], []] },
          { id: 't', z: 'tab', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
          // An error no Catch node takes is logged, and the debug sidebar shows it.
          { id: 'uncaught', z: 'tab', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
          { id: 'c', z: 'tab', type: 'catch', scope: ['t'], uncaught: false, wires: [['f']] },
          {
            id: 'f',
            z: 'tab',
            type: 'function',
            func: 'msg.payload = msg.error.message; return msg;',
            outputs: 1,
            wires: [['w']],
          },
          appendLinesNode('w', caught),
        ],
        {
          acc: { application_id: '1', application_token: 'error-language-token' },
          e: { secret: 'error-language-secret' },
        },
      );
      try {
        const editor = await copy.start({ env: { LANG: locale, LC_ALL: locale } });
        const res = await fetch(`${editor}/inject/alarm`, { method: 'POST' });
        assert.equal(res.status, 200);
        const lines = () => (existsSync(caught) ? readFileSync(caught, 'utf8').split('\n').filter(Boolean) : []);
        await until('the Catch node wrote what it caught', () => lines().length > 0).catch(() => undefined);
        assert.deepEqual(lines(), [expected], copy.output());
        // The same error, taken by no Catch node: the log (and the debug sidebar) say the same.
        const logged = `[error] [bulkgate-transactional:uncaught] ${expected}`;
        await until('the error in the log', () => copy.output().includes(logged)).catch(() => undefined);
        assert.ok(copy.output().includes(logged), `${logged}\n${copy.output()}`);
        assert.ok(copy.output().includes(`${tracking}: ${damaged}`), `${damaged}\n${copy.output()}`);
        assert.equal((await fetch(`${editor}/inject/short`, { method: 'POST' })).status, 200);
        await until('the outage in the log', () => copy.output().includes(unreachable)).catch(() => undefined);
        assert.ok(copy.output().includes(unreachable), `${unreachable}\n${copy.output()}`);
      } finally {
        await copy.remove();
      }
    });
  }
});
