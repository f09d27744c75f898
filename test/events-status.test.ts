/**
 * The events node's status as the editor shows it, in a Node-RED of its own: first deployed
 * without a secret it shows "no secret token"; once a secret is set and deployed, that status is
 * gone, for the editor open at the deploy and for one opened (reloaded) later (Node-RED keeps each
 * node's last status for the editors that connect after), while its endpoint checks the token.
 */
import assert from 'node:assert/strict';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { Sidebar, until } from './support/examples';

const PATH = '/hooks/status-test';
const SECRET = 'events-status-secret-1f2e3d';

describe('events node: its status after a secret was set and deployed', function () {
  this.timeout(90_000);
  let red: NodeRedProcess;
  const sidebars: Sidebar[] = [];
  const editor = async () => {
    const sidebar = new Sidebar();
    sidebars.push(sidebar);
    await sidebar.open(red.url);
    return sidebar;
  };
  const shown = (sidebar: Sidebar) => sidebar.statuses.filter((s) => s.id === 'ev').at(-1)?.text ?? '';

  before(async () => {
    red = nodeRedProcess('bulkgate-events-status-');
    const node = {
      id: 'ev',
      type: 'bulkgate-events',
      z: 'tab',
      name: '',
      path: PATH,
      account: '',
      reportTimeout: 0,
      wires: [[], [], []],
    };
    red.flows([{ id: 'tab', type: 'tab', label: 'events' }, node], {});
    await red.start();
  });
  after(async () => {
    for (const sidebar of sidebars) sidebar.close();
    await red.remove();
  });

  it('"no secret token" without one; after a deploy with one: gone at once and after a reload, and the endpoint takes the token', async () => {
    const before = await editor();
    await until('the status without a secret', () => shown(before) === 'no secret token', 10_000);

    // As the editor deploys a node whose secret was typed in: the credential with the node.
    const flows = [
      { id: 'tab', type: 'tab', label: 'events' },
      {
        id: 'ev',
        type: 'bulkgate-events',
        z: 'tab',
        name: '',
        path: PATH,
        account: '',
        reportTimeout: 0,
        wires: [[], [], []],
        credentials: { secret: SECRET },
      },
    ];
    const deployed = await fetch(`${red.url}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify({ flows }),
    });
    assert.equal(deployed.status, 200, await deployed.text());
    let answer = 0;
    await until(
      'the endpoint to take the token',
      async () => (answer = (await fetch(`${red.url}${PATH}?token=${SECRET}`)).status) !== 404,
      10_000,
    );
    assert.equal(answer, 400, 'the right token passes the check (a report without its fields is refused then)');
    assert.equal((await fetch(`${red.url}${PATH}?token=wrong`)).status, 403, 'a wrong token is refused');

    await new Promise((r) => setTimeout(r, 500)); // checks that no status comes late
    assert.equal(shown(before), '', 'the editor open at the deploy');
    const reloaded = await editor();
    await new Promise((r) => setTimeout(r, 1000)); // the statuses Node-RED keeps come at once on connecting
    assert.equal(shown(reloaded), '', 'an editor opened after the deploy');
  });
});
