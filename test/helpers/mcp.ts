import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../src/core/mcp/server.js';
import type { TestDatabase } from './db.js';

/**
 * The official SDK client connected to docdex's MCP server on `db` through an in-memory transport pair.
 * `localProjectDir` stands for the stdio server's working directory (absent: as over HTTP, no default).
 */
export async function connectMcpClient(db: Pick<TestDatabase, 'pool' | 'info' | 'config'>, options: { localProjectDir?: string; readOnly?: boolean } = {}): Promise<Client> {
  const { readOnly, ...deps } = options;
  const server = createMcpServer({ pool: db.pool, info: db.info, config: db.config, ...deps }, { readOnly: readOnly === true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'docdex-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}
