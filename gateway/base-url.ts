/** Which base URLs the client accepts: https, or plain http to this machine (the simulator). */
import { english, type Wording } from './wording';

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host) || host.endsWith('.localhost');
}

/** Why the client cannot use this base URL, as a wording the nodes put in the user's language. */
export function baseUrlWording(baseUrl: string): Wording | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { key: 'base-url-not-url' };
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return undefined;
  return { key: 'base-url-not-https' };
}

/** Why the client cannot use this base URL, in English. */
export function baseUrlProblem(baseUrl: string): string | undefined {
  const problem = baseUrlWording(baseUrl);
  return problem && english(problem);
}
