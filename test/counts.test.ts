/**
 * Count texts on the Node-RED under test (the project's 4.1, or 3.1, 4.0 and 5.0 in the version
 * matrix), through its own i18n: Node-RED 3.1 and 4.0 run i18next 21 in its v3 JSON format
 * (`key`/`key_plural`, `key_0`/`key_1`/`key_2`), 4.1 and later read the v4 keys the catalogs are
 * written in (`key_one`, `key_few`, `key_other`). Every count text renders in en-US, de and cs as
 * the form the catalog has for that count, never as its key; and in the runtime, a node's status,
 * the storm notice sent as an SMS and the events node's count read as sentences in German and Czech.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_SET } from '../nodes/definitions';
import { nodeRedI18n, NAMESPACE } from './support/i18n';
import { collect, helper, httpNode, load, NODE_RED_VERSION, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const LOCALES = join(__dirname, '..', 'nodes', 'locales');
/** Counts across every form of the three languages: cs's few (2 to 4) and its other from 5, and past the teens. */
const COUNTS = [0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 25, 100, 101, 102, 104, 1000];

/** Each count text of a built catalog (its key without the form) with its v4 forms, as the sources write them. */
function countTexts(lang: string): Map<string, Record<string, string>> {
  const texts = new Map<string, Record<string, string>>();
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') {
      const form = /^(.+)_(zero|one|two|few|many|other)$/.exec(path);
      if (form && value.includes('__count__'))
        texts.set(form[1] as string, { ...texts.get(form[1] as string), [form[2] as string]: value });
    } else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(JSON.parse(readFileSync(join(LOCALES, lang, `${NODE_SET}.json`), 'utf8')), '');
  return texts;
}

describe(`count texts on Node-RED ${NODE_RED_VERSION}, through its own i18n`, function () {
  this.timeout(60_000);

  for (const lang of ['en-US', 'de', 'cs']) {
    it(`every count text in ${lang}, for ${COUNTS.join(', ')}: the form its catalog has for the count, a sentence, not a key`, async () => {
      const _ = await nodeRedI18n(lang);
      const texts = countTexts(lang);
      for (const key of ['bulkgate-events.status.events', 'storm.notice', 'bulkgate-account.outbox.waiting'])
        assert.ok(texts.has(key), `${key} is a count text of the ${lang} catalog`);
      const rules = new Intl.PluralRules(lang);
      const wrong: string[] = [];
      for (const [key, forms] of texts) {
        for (const count of COUNTS) {
          const form = forms[rules.select(count)] as string;
          // Every other value the text names, each a word of its own.
          const params: Record<string, unknown> = { count };
          for (const [, name] of form.matchAll(/__(\w+)__/g))
            if (name !== 'count') params[name as string] = `«${name as string}»`;
          const expected = form.replace(/__(\w+)__/g, (_whole, name: string) => String(params[name]));
          const got = _(`${NAMESPACE}:${key}`, params);
          if (got !== expected)
            wrong.push(`${key} (${count}): ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`);
        }
      }
      assert.equal(
        wrong.length,
        0,
        `${wrong.length} of ${texts.size * COUNTS.length} renderings of ${texts.size} count texts are wrong:\n${wrong.slice(0, 12).join('\n')}`,
      );
    });
  }

  describe("the nodes with Node-RED's i18n in German and Czech", () => {
    const SECRET = 'counts-secret-60';
    let sim: TestSimulator;
    let server: Server;
    let base = '';
    let userDir = '';

    before(async () => {
      sim = await startTestSimulator(1_000_000);
      server = createServer((req, res) => (httpNode ? httpNode(req, res) : res.end()));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    beforeEach(async () => {
      userDir = mkdtempSync(join(tmpdir(), 'bulkgate-counts-'));
      helper.settings({ userDir });
      await sim.reset();
    });
    afterEach(async () => {
      await unload();
      helper.settings({});
      rmSync(userDir, { recursive: true, force: true });
    });
    after(async () => {
      server.close();
      await sim.close();
    });

    const SENTENCES = {
      de: {
        events: ['1 Ereignis', '2 Ereignisse', '5 Ereignisse'],
        waiting: ['1 wartet: HTTP 503', '2 warten: HTTP 503', '5 warten: HTTP 503'],
        storm: [
          1,
          'Alarmflut-Schutz: 1 weiterer Alarm wurde in den letzten 1 s zurückgehalten. Der letzte: Tür offen (3)',
        ],
      },
      cs: {
        events: ['1 událost', '2 události', '5 událostí'],
        waiting: ['1 čeká: HTTP 503', '2 čekají: HTTP 503', '5 čeká: HTTP 503'],
        storm: [
          2,
          'Ochrana proti zahlceni: za poslednich 1 s byla zadrzena dalsi 2 upozorneni. Posledni: Tür offen (4)',
        ],
      },
    } as const;

    const receive = (id: string, msg: unknown) =>
      (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);
    /** The texts of a node's statuses from now on. */
    const statuses = (id: string): string[] => {
      const texts: string[] = [];
      (helper.getNode(id) as TestNode).on('call:status', (call: { args: [{ text?: string }] }) =>
        texts.push(call.args[0].text ?? ''),
      );
      return texts;
    };

    for (const [lang, sentences] of Object.entries(SENTENCES)) {
      describe(`lang ${lang}`, () => {
        beforeEach(async () => {
          await load(
            [
              { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, timeout: 2000, outboxDelay: 60_000 },
              { id: 'acc2', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxMinutes: 0 },
              { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
              {
                id: 's',
                type: 'bulkgate-transactional',
                account: 'acc2',
                text: '',
                stormLimit: 3,
                stormWindow: 1,
                wires: [['sent'], []],
              },
              { id: 'e', type: 'bulkgate-events', path: '/counts/events', wires: [[], [], []] },
              { id: 'sent', type: 'helper' },
            ] as FlowNode[],
            {
              acc: { application_id: ACCOUNT_ID, application_token: TOKEN },
              acc2: { application_id: ACCOUNT_ID, application_token: TOKEN },
              e: { secret: SECRET },
            },
            { translate: await nodeRedI18n(lang) },
          );
        });

        it(`the events node's count after 1, 2 and 5 reports: ${sentences.events.join(', ')}`, async () => {
          const seen = statuses('e');
          let reports = 0;
          for (const [count, sentence] of [1, 2, 5].map((n, i) => [n, sentences.events[i]] as const)) {
            while (reports < count)
              assert.equal(
                (await fetch(`${base}/counts/events?token=${SECRET}&status=1&smsID=count-${reports++}`)).status,
                200,
              );
            await until(`"${sentence}"`, () => seen.includes(sentence), 10_000, {
              detail: () => `its statuses: ${JSON.stringify(seen)}`,
            });
          }
        });

        it(`a send node's status with 1, 2 and 5 alerts waiting for a gateway that answers 503: ${sentences.waiting.join(', ')}`, async () => {
          await sim.fault({ offline: { seconds: 600, mode: '503' } });
          const seen = statuses('t');
          let kept = 0;
          for (const [count, sentence] of [1, 2, 5].map((n, i) => [n, sentences.waiting[i]] as const)) {
            while (kept < count) receive('t', { payload: `Wasser im Keller ${kept++}`, number: '420777000600' });
            await until(`"${sentence}"`, () => seen.includes(sentence), 10_000, {
              detail: () => `its statuses: ${JSON.stringify(seen)}`,
            });
          }
          await sim.fault({ offline: { seconds: 0 } });
        });

        it(`the storm notice's SMS after ${sentences.storm[0]} held back: "${sentences.storm[1]}"`, async () => {
          // Three alerts in the storm window go out, the rest are held; one notice says how many, as an SMS.
          const [held, notice] = sentences.storm;
          const out = collect('sent', 4, 10_000);
          for (let i = 0; i < 3 + held; i++) receive('s', { payload: `Tür offen (${i})`, number: '420777000700' });
          await out;
          const texts = (await sim.outbox()).messages.filter((m) => m.number === '420777000700').map((m) => m.text);
          assert.deepEqual(texts.slice(3), [notice]);
        });
      });
    }
  });
});
