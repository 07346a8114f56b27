/** SHA-256 digests of text, the one way the service and the proxy take them. */
import * as crypto from 'node:crypto';

type Encoding = 'hex' | 'base64url';

// crypto.hash (Node 20.12+) takes a small input's digest in about half the time of a Hash
// object; a rule write takes two (its body and its findings key). Older Nodes get the object.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: Encoding) => string }).hash;

/** The SHA-256 digest of `text` (UTF-8), in `encoding`. */
export function sha256(text: string, encoding: Encoding): string {
  return oneShot ? oneShot('sha256', text, encoding) : crypto.createHash('sha256').update(text).digest(encoding);
}
