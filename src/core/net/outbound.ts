import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import { admittedAddresses, hostExplicitlyAllowed, OutboundRefusedError, refusalFor, stripBrackets } from './policy.js';
import type { OutboundPolicy, Resolve } from './policy.js';

/**
 * The outbound policy (policy.ts) applied to connections: an undici connector and dispatcher, and an agent for
 * libraries on node:http/https. Apart from policy.ts so that what only reads the policy (the configuration,
 * a CLI command validating a URL) does not load undici: it was most of a cold \`docdex search\`'s imports.
 */

export interface OutboundConnectorOptions {
  /** Connect timeout per attempt (undici's `connect.timeout`). */
  timeout?: number;
  /** Test seam: a resolver standing in for DNS. */
  resolve?: Resolve;
}

/**
 * An undici connector that resolves the host itself, checks every address against `policy`, and hands only
 * admitted addresses to undici's own connector (trying the next one when a connection fails). A refused
 * host never gets a socket. TLS still verifies the certificate against the host name (SNI and checks use
 * the original host, derived by undici from `host`).
 */
export function createOutboundConnector(policy: OutboundPolicy, options: OutboundConnectorOptions = {}): buildConnector.connector {
  const base = buildConnector(options.timeout === undefined ? {} : { timeout: options.timeout });
  return (connectOptions, callback) => {
    admittedAddresses(connectOptions.hostname, policy, options.resolve).then(
      (addresses) => {
        const attempt = (i: number): void => {
          base({ ...connectOptions, hostname: addresses[i]! }, (error, socket) => {
            if (error && i + 1 < addresses.length) attempt(i + 1);
            else if (error) callback(error, null);
            else callback(null, socket!);
          });
        };
        attempt(0);
      },
      (error: Error) => callback(error, null),
    );
  };
}

/** An undici dispatcher that only connects where `policy` admits: for undici's `request`/`fetch` (web push, downloads). */
export function createOutboundAgent(policy: OutboundPolicy, options: OutboundConnectorOptions & Omit<Agent.Options, 'connect'> = {}): Agent {
  const { timeout, resolve, ...agentOptions } = options;
  return new Agent({
    ...agentOptions,
    connect: createOutboundConnector(policy, { ...(timeout === undefined ? {} : { timeout }), ...(resolve ? { resolve } : {}) }),
  });
}

type LookupCallback = (error: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/**
 * For libraries on node:http/https: an Agent whose every connection passes the same check. Names go through
 * a `lookup` that answers only admitted addresses; IP literals (which node:net dials without a lookup) are
 * checked before the socket is created.
 */
export function createOutboundNodeAgent(policy: OutboundPolicy, options: { secure?: boolean; resolve?: Resolve } = {}): http.Agent {
  const lookup = (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    admittedAddresses(hostname, policy, options.resolve).then(
      (list) => {
        const answers = list.map((address) => ({ address, family: net.isIP(address) }));
        if (lookupOptions.all) callback(null, answers);
        else callback(null, answers[0]!.address, answers[0]!.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
  const agent = options.secure ? new https.Agent({ lookup } as https.AgentOptions) : new http.Agent({ lookup } as http.AgentOptions);
  const createConnection = agent.createConnection.bind(agent) as (o: net.NetConnectOpts, cb: (e: Error | null, s?: net.Socket) => void) => net.Socket | undefined;
  (agent as unknown as { createConnection: typeof createConnection }).createConnection = (connectOptions, callback) => {
    const host = stripBrackets(String((connectOptions as { host?: string }).host ?? ''));
    const refusal = net.isIP(host) !== 0 && !hostExplicitlyAllowed(host, policy.allow) ? refusalFor(host, policy) : null;
    if (refusal) {
      callback(new OutboundRefusedError(refusal, host));
      return undefined;
    }
    return createConnection(connectOptions, callback);
  };
  return agent;
}
