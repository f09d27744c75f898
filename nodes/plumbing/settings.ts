/** Settings as a flow file holds them, read into what the code uses. */
import type { NodeAPI } from 'node-red';
import type { ProxySettings } from '../../gateway';

/** A number setting from a flow file: missing or empty takes the default (older or hand-written flows). */
export function numberSetting(value: unknown, fallback: number, min = 0): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= min ? n : fallback;
}

/** A core `http proxy` node's settings: undefined for none (the environment's), null when not deployed. */
export function proxySettings(RED: NodeAPI, id: string | undefined): ProxySettings | undefined | null {
  if (!id) return undefined;
  const proxy = RED.nodes.getNode(id) as {
    url?: string;
    noproxy?: string[];
    credentials?: { username?: string; password?: string };
  } | null;
  if (!proxy) return null;
  if (!proxy.url) return undefined;
  return {
    url: proxy.url,
    noProxy: proxy.noproxy,
    username: proxy.credentials?.username,
    password: proxy.credentials?.password,
  };
}
