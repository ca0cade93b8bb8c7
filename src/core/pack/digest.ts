import { createHash } from 'node:crypto';

/**
 * A library version's content digest (docs/pack-format.md): the sum modulo 2^256 of SHA-256 over each
 * document's URL and content hash and each snippet's code hash, title, description and language. A sum does
 * not depend on order, so the exporter, the importer and a database read compute it in whatever order their
 * rows come, holding nothing but the running total.
 */
const MODULUS = 1n << 256n;

export class ContentDigest {
  private total = 0n;

  addDocument(url: string, contentHash: string): void {
    this.add(`d\t${url}\t${contentHash}`);
  }

  addSnippet(codeHash: string, title: string, description: string, language: string): void {
    this.add(`s\t${codeHash}\t${title}\t${description}\t${language}`);
  }

  hex(): string {
    return this.total.toString(16).padStart(64, '0');
  }

  private add(item: string): void {
    this.total = (this.total + BigInt(`0x${createHash('sha256').update(item).digest('hex')}`)) % MODULUS;
  }
}
