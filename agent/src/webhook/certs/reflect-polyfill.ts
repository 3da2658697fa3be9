/**
 * @peculiar/x509 resolves its ASN.1 parsers through tsyringe, which needs the Reflect metadata
 * API. Imported first by pki.ts so the polyfill is in place before the library loads.
 */
import 'reflect-metadata';
