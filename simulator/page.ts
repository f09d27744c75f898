/** The outbox page: the messages the simulator "delivered", as bubbles per recipient. */
export function outboxPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>BulkGate simulator outbox</title></head><body><h1>Outbox</h1><pre id="out"></pre>
<script>
async function load(){const r=await fetch('/simulator/outbox');const o=await r.json();document.getElementById('out').textContent=JSON.stringify(o,null,2);}
load();new EventSource('/simulator/events').onmessage=load;
</script></body></html>`;
}
