/** Opening and cancelling a node's edit panel in the editor, as a user does (Chromium tests). */
import type { Page } from 'playwright-core';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

/** Opens node `id`'s panel (a config node's too) and waits until its fields are there. */
export async function edit(page: Page, id: string): Promise<void> {
  await page.evaluate((nodeId) => {
    const node = RED.nodes.node(nodeId);
    if (node._def.category === 'config') RED.editor.editConfig('', node.type, nodeId);
    else RED.editor.edit(node);
  }, id);
  await page.waitForSelector('.red-ui-tray-body #node-input-name, .red-ui-tray-body #node-config-input-name', {
    state: 'visible',
  });
  await page.waitForTimeout(300);
}

/** Cancels the open panel (a config node's or a flow node's) and waits until it is gone. */
export async function cancel(page: Page): Promise<void> {
  const button = (await page.locator('#node-config-dialog-cancel').isVisible())
    ? '#node-config-dialog-cancel'
    : '#node-dialog-cancel';
  await page.click(button);
  await page.waitForSelector(button, { state: 'detached' });
}
