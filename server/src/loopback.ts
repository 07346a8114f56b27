/**
 * Whether a URL names this machine (127.0.0.0/8, ::1, localhost): the one place plain http
 * may carry a credential, for the extension's API client and the CLI's Terraform export.
 */
export function isLoopback(url: string): boolean {
  try {
    const h = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
  } catch {
    return false;
  }
}
