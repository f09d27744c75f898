/** Long runs and memory: text counting, the steady soak, the tracking soak, and what using the package costs. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SegmentedMessage } from 'sms-segments-calculator';
import { GatewayClient, measureText, sendOperation } from '../gateway';
import { ID, PLAN, QUICK, ROOT, TOKEN, closedLoop, gc, median, round, runtime } from './harness';
import { nodeRedSender, throughputFlow } from './closed-loop';
import { MB, probe } from './install-cost';

/**
 * Counting a text (the event loop's bound on input): the adversarial texts at the 612-character limit, counted by the
 * package and, side by side, by the segment library it used before; and what a text far over the
 * limit costs through `prepare` (refused by the bound before counting).
 */
export function counting() {
  const texts: Record<string, string> = {
    'combining marks': '\u0301'.repeat(612),
    'euro signs': '€'.repeat(612),
    'escaped {': '{'.repeat(612),
    'emoji (surrogate pairs)': '😀'.repeat(306),
    'GSM letters': 'a'.repeat(612),
    mixed: 'aé€{😀\u0301'.repeat(88),
  };
  const time = (fn: () => void, repeats: number) => {
    const runs: number[] = [];
    for (let r = 0; r < PLAN.runs + 1; r++) {
      const t = performance.now();
      for (let i = 0; i < repeats; i++) fn();
      if (r > 0) runs.push((performance.now() - t) / repeats);
    }
    return median(runs);
  };
  const rows: Record<string, unknown>[] = [];
  for (const [name, text] of Object.entries(texts)) {
    const pkg = time(() => measureText(text, true), 200);
    const library = time(() => new SegmentedMessage(text, 'auto'), 5);
    const row = {
      text: name,
      characters: text.length,
      packageMs: round(pkg, 4),
      libraryMs: round(library, 3),
      ratio: round(library / pkg, 0),
    };
    rows.push(row);
    console.log(
      `count ${name.padEnd(24)} ${String(text.length).padStart(4)} units: package ${row.packageMs} ms, segment library ${row.libraryMs} ms (${row.ratio}x)`,
    );
  }
  const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', applicationId: ID, applicationToken: TOKEN });
  const huge = '\u0301'.repeat(100_000);
  const refusedMs = time(() => {
    try {
      client.prepareOperation(sendOperation('transactional'), { number: '420777123456', text: huge });
    } catch {
      // refused: the text is over the limit
    }
  }, 50);
  void client.close();
  console.log(`count 100,000 combining marks through prepare: refused in ${round(refusedMs, 4)} ms`);
  return {
    texts: rows,
    hugeTextRefusedMs: round(refusedMs, 4),
    worstPackageMs: Math.max(...rows.map((r) => r.packageMs as number)),
  };
}

export async function soak(fixedUrl: string) {
  await runtime.deploy(throughputFlow('soak', fixedUrl));
  const sender = nodeRedSender('soak-package');
  await closedLoop(500, 8, sender.send);
  gc();
  const start = process.memoryUsage();
  const end = Date.now() + PLAN.soakSeconds * 1000;
  let sent = 0;
  while (Date.now() < end) {
    await closedLoop(500, 8, sender.send);
    sent += 500;
  }
  gc();
  const finish = process.memoryUsage();
  await sender.close();
  const row = {
    seconds: PLAN.soakSeconds,
    messages: sent,
    rssStartMB: round(start.rss / 2 ** 20, 1),
    rssEndMB: round(finish.rss / 2 ** 20, 1),
    heapStartMB: round(start.heapUsed / 2 ** 20, 1),
    heapEndMB: round(finish.heapUsed / 2 ** 20, 1),
    heapGrowthMB: round((finish.heapUsed - start.heapUsed) / 2 ** 20, 1),
  };
  console.log(
    `soak ${row.seconds} s, ${sent} msgs: RSS ${row.rssStartMB} → ${row.rssEndMB} MB, heap ${row.heapStartMB} → ${row.heapEndMB} MB`,
  );
  return row;
}

/**
 * Delivery tracking under a long run: 50,000 sends by a node whose account an events
 * node tracks (with a report timeout of an hour, so every message waits for its report), each
 * with its own sms_id. The account remembers the last 10,000: the heap after a garbage collection
 * at 10,000 sends and at 50,000 must be the same give or take.
 */
export async function trackingSoak(fixedUrl: string) {
  // Quick: just past the 10,000 the account keeps, to prove the section runs.
  const total = QUICK ? 12_000 : 50_000;
  await runtime.deploy([
    ...throughputFlow('track', fixedUrl),
    {
      id: 'track-events',
      type: 'bulkgate-events',
      path: '/bench/events',
      account: 'track-acc',
      reportTimeout: 3600,
      wires: [[], [], []],
    },
  ]);
  const sender = nodeRedSender('track-package');
  const heapAt = async (sends: number) => {
    await closedLoop(sends, 16, sender.send);
    gc();
    return process.memoryUsage().heapUsed;
  };
  const at10000 = await heapAt(10_000);
  const atHalf = await heapAt((total - 10_000) / 2);
  const atEnd = await heapAt((total - 10_000) / 2);
  await sender.close();
  const row = {
    messages: total,
    heapAt10000MB: MB(at10000),
    heapAtHalfMB: MB(atHalf),
    heapAtEndMB: MB(atEnd),
    growthMB: MB(atEnd - at10000),
  };
  console.log(
    `tracking ${total} sends: heap after 10,000 ${row.heapAt10000MB} MB, after ${10_000 + (total - 10_000) / 2} ${row.heapAtHalfMB} MB, after ${total} ${row.heapAtEndMB} MB (growth ${row.growthMB} MB)`,
  );
  return row;
}

/** What using it costs: memory after 10,000 sends at once and after the largest campaign, in a process of its own. */
export async function usage(fixedUrl: string) {
  const dir = mkdtempSync(join(tmpdir(), 'bulkgate-use-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'node-red-contrib-bulkgate'), 'dir');
  const recipients = Math.max(...PLAN.recipients);
  try {
    const r = await probe(['use', dir, fixedUrl, String(recipients)]);
    const at = (stage: unknown) => ({
      rssMB: MB((stage as { rss: number }).rss),
      heapMB: MB((stage as { heapUsed: number }).heapUsed),
    });
    const row = {
      recipients,
      deployed: at(r.deployed),
      after10000Sends: at(r.after10000Sends),
      afterCampaign: at(r.afterCampaign),
    };
    console.log(
      `in use: deployed ${row.deployed.rssMB} MB RSS / ${row.deployed.heapMB} MB heap; after 10,000 sends ${row.after10000Sends.rssMB} / ${row.after10000Sends.heapMB}; after a ${recipients}-recipient campaign ${row.afterCampaign.rssMB} / ${row.afterCampaign.heapMB}`,
    );
    return row;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
