/** A type whose code loads with its first node (loaded at start: 100 ms and 10 MB per Node-RED). */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { DEFINITIONS } from '../definitions';

type NodeConstructor = (this: Node, config: NodeDef) => void;

export function registerLazily(RED: NodeAPI, type: string, load: () => NodeConstructor): void {
  let construct: NodeConstructor | undefined;
  function BulkgateNode(this: Node, config: NodeDef): void {
    construct ??= load();
    construct.call(this, config);
  }
  const credentials = DEFINITIONS[type]?.credentials;
  RED.nodes.registerType(type, BulkgateNode as never, credentials ? { credentials } : undefined);
}
