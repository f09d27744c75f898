/**
 * Registers a node type whose code is loaded when the first node of that type starts. A
 * Node-RED with the package installed loads only the small entry files at start; the gateway
 * client, undici, the validators and the node's own code come with the first node that needs
 * them (measured by the benchmark: the package cost every Node-RED 100 ms and 10 MB whether it was used or not).
 */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { CREDENTIALS } from '../credentials';

type NodeConstructor = (this: Node, config: NodeDef) => void;

export function registerLazily(RED: NodeAPI, type: string, load: () => NodeConstructor): void {
  let construct: NodeConstructor | undefined;
  function BulkgateNode(this: Node, config: NodeDef): void {
    construct ??= load();
    construct.call(this, config);
  }
  const credentials = CREDENTIALS[type];
  RED.nodes.registerType(type, BulkgateNode as never, credentials ? { credentials } : undefined);
}
