/**
 * Registers a node type whose code loads when the first node of that type starts (the benchmark:
 * loaded at start, the package cost every Node-RED 100 ms and 10 MB whether it was used or not).
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
