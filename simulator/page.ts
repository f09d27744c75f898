/** The outbox page, live (server-sent events); its button takes the gateway offline (HTTP 503) for a minute. */
export const OUTBOX_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>BulkGate simulator · outbox</title>
<link rel="icon" href="data:,">
<style>
  :root { --bg: #eef1f4; --card: #fff; --ink: #1d2733; --muted: #6b7785; --sms: #2f80ed; --viber: #7360f2; --ok: #2e9d5b; --wait: #c98a12; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--ink); }
  header { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; justify-content: space-between; padding: 12px 16px; background: #17212b; color: #fff; }
  header h1 { margin: 0; font-size: 17px; font-weight: 600; }
  header .live { font-size: 12px; opacity: .8; }
  header .live::before { content: ""; display: inline-block; width: 8px; height: 8px; margin-right: 6px; border-radius: 50%; background: #6fcf97; }
  header .live.off::before { background: #eb5757; }
  .credits { display: flex; gap: 8px; flex-wrap: wrap; }
  .credit { padding: 3px 10px; border-radius: 12px; background: rgba(255,255,255,.12); font-size: 13px; }
  .gateway { display: flex; gap: 8px; align-items: center; font-size: 13px; }
  .gateway button { font: inherit; padding: 3px 10px; border: 0; border-radius: 12px; background: #eb5757; color: #fff; cursor: pointer; }
  .gateway.offline button { background: #6fcf97; color: #17212b; }
  .gateway.offline #gateway-state { color: #f2c94c; font-weight: 600; }
  main { max-width: 760px; margin: 0 auto; padding: 12px; }
  .empty { margin: 48px 16px; text-align: center; color: var(--muted); }
  .thread { margin: 0 0 14px; padding: 12px; border-radius: 12px; background: var(--card); box-shadow: 0 1px 2px rgba(0,0,0,.06); }
  .thread h2 { margin: 0 0 8px; font-size: 14px; font-weight: 600; color: var(--muted); }
  .thread h2 b { color: var(--ink); font-size: 15px; }
  .bubble { position: relative; max-width: 92%; margin: 6px 0 2px; padding: 8px 12px; border-radius: 14px 14px 14px 4px; background: #e7f0fd; white-space: pre-wrap; word-wrap: break-word; }
  .bubble.viber { background: #ece9fe; }
  .meta { display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 0 0 10px 4px; font-size: 12px; color: var(--muted); }
  .tag { padding: 0 7px; border-radius: 8px; color: #fff; font-weight: 600; }
  .tag.sms { background: var(--sms); }
  .tag.viber { background: var(--viber); }
  .tag.otp { background: #3d4a5c; }
  .tag.whatsapp { background: #25a35a; }
  .tag.rcs { background: #d1603d; }
  .bubble.whatsapp { background: #dcf8c6; }
  .bubble.rcs { background: #fde7df; }
  .status.sent { color: var(--ok); }
  .status.scheduled { color: var(--wait); font-weight: 600; }
  @media (max-width: 480px) { main { padding: 8px; } .bubble { max-width: 100%; } }
</style>
</head>
<body>
<header>
  <div><h1>BulkGate simulator · outbox</h1><span class="live" id="live">live</span></div>
  <div class="gateway" id="gateway"><span id="gateway-state">gateway online</span><button type="button" id="gateway-toggle">Go offline for a minute</button></div>
  <div class="credits" id="credits"></div>
</header>
<main id="outbox"><p class="empty">No messages yet. Send one from Node-RED and it appears here.</p></main>
<script>
(function () {
  var outbox = document.getElementById('outbox');
  var credits = document.getElementById('credits');
  var live = document.getElementById('live');
  var gateway = document.getElementById('gateway');
  var gatewayState = document.getElementById('gateway-state');
  var toggle = document.getElementById('gateway-toggle');
  var offlineUntil = 0;
  var backTimer;
  function showGateway() {
    var offline = offlineUntil > Date.now();
    gateway.className = 'gateway' + (offline ? ' offline' : '');
    gatewayState.textContent = offline ? 'gateway offline (HTTP 503) until ' + new Date(offlineUntil).toLocaleTimeString() : 'gateway online';
    toggle.textContent = offline ? 'Back online now' : 'Go offline for a minute';
    clearTimeout(backTimer);
    if (offline) backTimer = setTimeout(showGateway, offlineUntil - Date.now() + 50);
  }
  toggle.addEventListener('click', function () {
    var seconds = offlineUntil > Date.now() ? 0 : 60;
    fetch('/simulator/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offline: { seconds: seconds, mode: '503' } }) }).then(load);
  });
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  function time(iso) { var d = new Date(iso); return d.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }); }
  function render(data) {
    offlineUntil = data.offlineUntil || 0;
    showGateway();
    credits.textContent = '';
    data.accounts.forEach(function (a) { credits.appendChild(el('span', 'credit', 'account ' + a.id + ': ' + a.credit + ' ' + a.currency)); });
    outbox.textContent = '';
    if (!data.messages.length) { outbox.appendChild(el('p', 'empty', 'No messages yet. Send one from Node-RED and it appears here.')); return; }
    var threads = new Map();
    data.messages.slice().reverse().forEach(function (m) {
      if (!threads.has(m.number)) threads.set(m.number, []);
      threads.get(m.number).push(m);
    });
    threads.forEach(function (messages, number) {
      var thread = el('section', 'thread');
      thread.setAttribute('data-number', number);
      var h = el('h2'); h.appendChild(el('b', '', '+' + number)); h.appendChild(document.createTextNode(' · ' + messages.length + ' message' + (messages.length > 1 ? 's' : '')));
      thread.appendChild(h);
      messages.slice().reverse().forEach(function (m) {
        var b = el('div', 'bubble ' + m.channel, m.text); b.setAttribute('data-sms-id', m.sms_id); thread.appendChild(b);
        var meta = el('div', 'meta');
        meta.appendChild(el('span', 'tag ' + m.channel, m.channel.toUpperCase()));
        if (m.kind === 'otp') meta.appendChild(el('span', 'tag otp', 'OTP'));
        meta.appendChild(el('span', '', 'from ' + m.sender));
        if (m.channel === 'sms') meta.appendChild(el('span', '', m.parts + ' part' + (m.parts > 1 ? 's' : '') + (m.unicode ? ' · Unicode' : '')));
        meta.appendChild(el('span', '', m.price + ' credits'));
        meta.appendChild(el('span', 'status ' + m.status, m.status === 'scheduled' ? 'scheduled for ' + time(m.scheduled) : 'sent ' + time(m.created)));
        thread.appendChild(meta);
      });
      outbox.appendChild(thread);
    });
  }
  function load() { fetch('/simulator/outbox').then(function (r) { return r.json(); }).then(render).catch(function () {}); }
  var events = new EventSource('/simulator/events');
  events.onmessage = load;
  events.onopen = function () { live.className = 'live'; live.textContent = 'live'; load(); };
  events.onerror = function () { live.className = 'live off'; live.textContent = 'reconnecting…'; };
  load();
})();
</script>
</body>
</html>`;
