/** Which base URLs the client accepts: https, or plain http to this machine (the simulator). */

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host) || host.endsWith('.localhost');
}

export function baseUrlProblem(baseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'baseUrl must be a URL such as https://portal.bulkgate.com';
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return undefined;
  return 'baseUrl must use https:// (plain http:// only for loopback hosts such as the simulator)';
}
