// The official SDK's HMAC validator of Adyen's standard webhooks. The SDK is CommonJS and its index
// loads every API client (seconds at start-up): the validator's own file is required alone.
import { createRequire } from 'node:module';

interface HmacValidator {
  calculateHmac(data: object | string, key: string): string;
  validateHMAC(item: object, key: string): boolean;
  /** Balance platform webhooks (transfers): base64 HMAC-SHA256 of the raw body, from the HmacSignature header. */
  validateHMACSignature(hmacKey: string, hmacSignature: string, data: string): boolean;
}

const require = createRequire(import.meta.url);
const { default: Validator } = require('@adyen/api-library/lib/src/utils/hmacValidator.js') as { default: new () => HmacValidator };

export const adyenHmac: HmacValidator = new Validator();
