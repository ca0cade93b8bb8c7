import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { createScope } from '../../src/core/crawl/scope.js';
import { createOutboundAgent, createOutboundNodeAgent } from '../../src/core/net/outbound.js';
import { admittedAddresses, embeddedIPv4, OUTBOUND_REFUSED, parseAllowHosts, refusalFor, refusalForUrl } from '../../src/core/net/policy.js';
import type { OutboundPolicy, Resolve } from '../../src/core/net/policy.js';

/**
 * The outbound policy on its own. Nothing here sends a packet to a private or public address: internal ranges
 * other than loopback are reached only through an injected resolver, and the assertions show no socket is
 * ever created for them.
 */

const strict: OutboundPolicy = { allow: [], allowLoopback: false };
const cli: OutboundPolicy = { allow: [], allowLoopback: true };

const REFUSED = [
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local address (the cloud metadata service)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['ff02::1', 'multicast'],
  ['64:ff9b::7f00:1', 'loopback address in IPv6 form'],
  ['2002:7f00:1::1', 'loopback address in IPv6 form'],
  ['64:ff9b::808:808', 'special-purpose'],
  ['2002:808:808::1', 'special-purpose'],
] as const;

describe('refusalFor: the address ranges', () => {
  it.each(REFUSED)('refuses %s (%s) with a message that says what to do', (ip, kind) => {
    const message = refusalFor(ip, strict);
    expect(message).toContain(kind);
    expect(message).toMatch(/^refused: .* add it to CRAWL_ALLOW_HOSTS to crawl internal docs$/);
  });

  it('admits ordinary public unicast addresses', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8']) expect(refusalFor(ip, strict), ip).toBeNull();
  });

  it('names the loopback address plainly', () => {
    expect(refusalFor('127.0.0.1', strict)).toBe('refused: 127.0.0.1 is a loopback address; add it to CRAWL_ALLOW_HOSTS to crawl internal docs');
    expect(refusalFor('10.0.0.1', strict, 'intranet.corp')).toBe('refused: intranet.corp resolves to 10.0.0.1, a private address; add it to CRAWL_ALLOW_HOSTS to crawl internal docs');
  });

  it('lets a CLI crawl reach loopback, and only loopback', () => {
    for (const ip of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(refusalFor(ip, cli), ip).toBeNull();
    for (const ip of ['10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::', 'fc00::1', 'fe80::1']) {
      expect(refusalFor(ip, cli), ip).not.toBeNull();
    }
  });

  it('admits what CRAWL_ALLOW_HOSTS lists, by CIDR or address, including the IPv4-mapped form', () => {
    const policy: OutboundPolicy = { allow: parseAllowHosts('10.0.0.0/8, 127.0.0.1, fd00::/8'), allowLoopback: false };
    expect(refusalFor('10.20.30.40', policy)).toBeNull();
    expect(refusalFor('127.0.0.1', policy)).toBeNull();
    expect(refusalFor('::ffff:127.0.0.1', policy)).toBeNull();
    expect(refusalFor('fd00::5', policy)).toBeNull();
    expect(refusalFor('127.0.0.2', policy)).not.toBeNull();
    expect(refusalFor('192.168.0.1', policy)).not.toBeNull();
  });
});

/**
 * SECURITY.md, "What the crawler may reach": "IPv6 forms that carry an IPv4 address (IPv4-mapped and
 * IPv4-compatible, IPv4-translated, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo
 * `2001::/32` with its obfuscated client, and ISATAP interface identifiers) are refused whenever the IPv4
 * address they carry would be." Classifier only: no address here is ever dialled.
 */
describe('IPv6 forms that carry an IPv4 address', () => {
  // Teredo keeps its client's address inverted: ~127.0.0.1 is 80ff:fffe.
  const LOOPBACK_FORMS = [
    ['IPv4-compatible', '::7f00:1'],
    ['IPv4-translated', '::ffff:0:7f00:1'],
    ['NAT64', '64:ff9b::7f00:1'],
    ['6to4', '2002:7f00:1::1'],
    ['Teredo client', '2001:0:808:808:0:0:80ff:fffe'],
    ['Teredo server', '2001:0:7f00:1:0:0:f7f7:f7f7'],
    ['ISATAP under a global prefix', '2a00:1450:4001::200:5efe:7f00:1'],
    ['ISATAP, private form', '2a00:1450:4001::5efe:7f00:1'],
  ] as const;

  it.each(LOOPBACK_FORMS)('%s %s is judged as 127.0.0.1: refused, and named so', (_form, ip) => {
    const message = refusalFor(ip, strict);
    expect(message).toMatch(/^refused: .* a loopback address in IPv6 form \(it carries 127\.0\.0\.1\); add it to CRAWL_ALLOW_HOSTS to crawl internal docs$/);
    expect(refusalForUrl(`http://[${ip}]:8080/`, strict)).toBe(message);
  });

  it('refuses the dotted IPv4-compatible spelling, and the local-use NAT64 prefix at each length RFC 6052 allows', () => {
    expect(refusalFor('::127.0.0.1', strict)).toMatch(/^refused: .*127\.0\.0\.1.* loopback address/);
    // 64:ff9b:1::/48 is refused whatever it carries; where the operator put the IPv4 address is unknowable, so every place counts.
    for (const ip of ['64:ff9b:1:7f00:0:100::', '64:ff9b:1:7f:0:1::', '64:ff9b:1:0:7f:0:100::', '64:ff9b:1::7f00:1']) {
      expect(refusalFor(ip, strict), ip).toMatch(/^refused: /);
      expect(refusalFor(ip, cli), ip).toMatch(/^refused: /);
      expect(embeddedIPv4(ipaddr.parse(ip) as ipaddr.IPv6).map(String), ip).toContain('127.0.0.1');
    }
  });

  it('carries private, link-local and metadata addresses the same way', () => {
    expect(refusalFor('::a00:1', strict)).toContain('a private address in IPv6 form (it carries 10.0.0.1)');
    expect(refusalFor('::a9fe:a9fe', strict)).toContain('(the cloud metadata service) in IPv6 form (it carries 169.254.169.254)');
    expect(refusalFor('2a00:1450:4001::5efe:c0a8:101', strict)).toContain('it carries 192.168.1.1');
  });

  it('leaves public addresses that merely look alike, and public IPv4 addresses in the forms that are ordinary unicast, admitted', () => {
    for (const ip of ['::808:808', '2a00:1450:4001::200:5efe:808:808', '2a00:1450:4001::200e', '2606:4700::1111']) expect(refusalFor(ip, strict), ip).toBeNull();
    // Tunnels and translators stay refused as special-purpose whatever they carry.
    for (const ip of ['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808:0:0:f7f7:f7f7']) expect(refusalFor(ip, strict), ip).toMatch(/special-purpose/);
  });

  it('gives the CLI loopback, and CRAWL_ALLOW_HOSTS its listed address, in the IPv4-compatible form too', () => {
    expect(refusalFor('::7f00:1', cli)).toBeNull();
    expect(refusalFor('::a00:1', cli)).toMatch(/private/);
    expect(refusalFor('::a00:1', { allow: parseAllowHosts('10.0.0.0/8'), allowLoopback: false })).toBeNull();
  });

  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const hex4 = (o: number[]) => [((o[0]! << 8) | o[1]!).toString(16), ((o[2]! << 8) | o[3]!).toString(16)];
  const inv4 = (o: number[]) => hex4(o.map((b) => 255 - b));
  const forms: Record<string, (o: number[], extra: string) => string> = {
    compatible: (o) => `::${hex4(o).join(':')}`,
    translated: (o) => `::ffff:0:${hex4(o).join(':')}`,
    nat64: (o) => `64:ff9b::${hex4(o).join(':')}`,
    nat64LocalUse96: (o) => `64:ff9b:1::${hex4(o).join(':')}`,
    sixToFour: (o, extra) => `2002:${hex4(o).join(':')}:${extra}::1`,
    teredoClient: (o, extra) => `2001:0:${extra}:1:0:0:${inv4(o).join(':')}`,
    teredoServer: (o) => `2001:0:${hex4(o).join(':')}:0:0:f7f7:f7f7`,
    isatap: (o, extra) => `2a00:1450:${extra}::200:5efe:${hex4(o).join(':')}`,
  };

  it('property: every form of an IPv4 address the policy refuses is refused, and carries that address', () => {
    fc.assert(
      fc.property(
        v4,
        fc.constantFrom(...Object.keys(forms)),
        fc.integer({ min: 1, max: 0xffff }).map((n) => n.toString(16)),
        (octets, form, extra) => {
          const dotted = octets.join('.');
          const ip = forms[form]!(octets, extra);
          const address = ipaddr.parse(ip) as ipaddr.IPv6;
          const carried = embeddedIPv4(address).map(String);
          if (!(form === 'compatible' && /^0\.0\.0\.[01]$/.test(dotted))) expect(carried, ip).toContain(dotted);
          for (const policy of [strict, cli]) {
            if (refusalFor(dotted, policy) !== null) expect(refusalFor(ip, policy), ip).toMatch(/^refused: /);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('property: any IPv6 address admitted under the strict policy carries only admitted IPv4 addresses', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const address = ipaddr.parse(ip) as ipaddr.IPv6;
        if (refusalFor(ip, strict) !== null) return;
        for (const carried of embeddedIPv4(address)) expect(refusalFor(carried.toString(), strict), `${ip} carries ${carried.toString()}`).toBeNull();
      }),
      { numRuns: 3000 },
    );
  });
});

describe('refusalForUrl: what a URL shows before any DNS', () => {
  it('normalises the odd forms of 127.0.0.1 and refuses them', () => {
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::1]:8080/', 'http://0.0.0.0:80/']) {
      expect(refusalForUrl(url, strict), url).toMatch(/^refused: /);
    }
  });

  it('treats localhost and *.localhost as loopback whatever a resolver says', () => {
    expect(refusalForUrl('http://localhost:3000/', strict)).toContain('localhost resolves to 127.0.0.1, a loopback address');
    expect(refusalForUrl('http://docs.localhost./', strict)).toMatch(/^refused: /);
    expect(refusalForUrl('http://localhost:3000/', cli)).toBeNull();
  });

  it('leaves other names to the connect-time check, and admits listed names', () => {
    expect(refusalForUrl('https://docs.python.org/3/', strict)).toBeNull();
    expect(refusalForUrl('http://localhost/', { allow: parseAllowHosts('localhost'), allowLoopback: false })).toBeNull();
  });
});

describe('CRAWL_ALLOW_HOSTS parsing', () => {
  it('accepts CIDRs, addresses and host names; refuses junk with the variable named', () => {
    expect(parseAllowHosts(' 10.0.0.0/8 ,,[::1], Docs.Internal. ').map((e) => (e.kind === 'host' ? e.name : e.text))).toEqual(['10.0.0.0/8', '::1', 'docs.internal']);
    expect(loadConfig({ CRAWL_ALLOW_HOSTS: '192.168.0.0/16,wiki.corp' }).outbound.allowHosts).toHaveLength(2);
    expect(loadConfig({}).outbound.allowHosts).toEqual([]);
    for (const bad of ['10.0.0.0/33', 'http://x/', 'a b', '1.2.3.4/x']) {
      expect(() => loadConfig({ CRAWL_ALLOW_HOSTS: bad }), bad).toThrow(/Invalid environment variable CRAWL_ALLOW_HOSTS/);
    }
  });
});

/** Sockets node:net creates while `fn` runs (net.connect publishes each one on this channel). */
async function socketsDuring(fn: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const onSocket = () => count++;
  diagnosticsChannel.subscribe('net.client.socket', onSocket);
  try {
    await fn();
  } finally {
    diagnosticsChannel.unsubscribe('net.client.socket', onSocket);
  }
  return count;
}

/** An "internal" HTTP server on 127.0.0.1 for one describe block, counting the TCP connections it accepts. */
function internalListener(): { port: () => number; connections: () => number } {
  let server: http.Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('internal'));
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { port: () => port, connections: () => connections };
}

describe('the connector: checked at connect time, after DNS', () => {
  const listener = internalListener();

  const zone: Record<string, string[]> = {
    'intranet.test': ['10.0.0.1'],
    'rfc1918-b.test': ['172.16.5.4'],
    'home.test': ['192.168.1.10'],
    'metadata.test': ['169.254.169.254'],
    'cgnat.test': ['100.64.0.1'],
    'ula.test': ['fc00::1'],
    'linklocal.test': ['fe80::1'],
    'rebind.test': ['127.0.0.1'],
    'mixed.test': ['10.0.0.1', '127.0.0.1'],
  };
  const resolve: Resolve = async (name) => (zone[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  async function refusedCode(agent: ReturnType<typeof createOutboundAgent>, url: string): Promise<string | undefined> {
    try {
      await request(url, { dispatcher: agent });
      return undefined;
    } catch (error) {
      return (error as { code?: string }).code;
    }
  }

  it.each(Object.keys(zone).filter((n) => !n.startsWith('rebind') && !n.startsWith('mixed')))('refuses %s before any socket exists', async (name) => {
    const agent = createOutboundAgent(strict, { resolve });
    let code: string | undefined;
    const sockets = await socketsDuring(async () => {
      code = await refusedCode(agent, `http://${name}:${listener.port()}/`);
    });
    await agent.close();
    expect(code).toBe(OUTBOUND_REFUSED);
    expect(sockets).toBe(0);
  });

  it('refuses a name that resolves to loopback for a REST/MCP crawl, and reaches it for a CLI crawl', async () => {
    const before = listener.connections();
    const apiAgent = createOutboundAgent(strict, { resolve });
    expect(await refusedCode(apiAgent, `http://rebind.test:${listener.port()}/`)).toBe(OUTBOUND_REFUSED);
    await apiAgent.close();
    expect(listener.connections()).toBe(before);
    const cliAgent = createOutboundAgent(cli, { resolve });
    let text = '';
    // The channel the refusals are counted on does see a socket when one is made.
    const sockets = await socketsDuring(async () => {
      const res = await request(`http://rebind.test:${listener.port()}/`, { dispatcher: cliAgent });
      text = await res.body.text();
    });
    expect(text).toBe('internal');
    expect(sockets).toBe(1);
    await cliAgent.close();
    expect(listener.connections()).toBe(before + 1);
  });

  it('dials only the admitted addresses of a name with several', async () => {
    expect(await admittedAddresses('mixed.test', cli, resolve)).toEqual(['127.0.0.1']);
    await expect(admittedAddresses('mixed.test', strict, resolve)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    await expect(admittedAddresses('nowhere.test', strict, resolve)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
  });

  it('refuses IP literals in the connector too (for callers that skip the URL check)', async () => {
    const agent = createOutboundAgent(strict);
    const before = listener.connections();
    for (const url of [`http://127.0.0.1:${listener.port()}/`, `http://[::ffff:127.0.0.1]:${listener.port()}/`, `http://0.0.0.0:${listener.port()}/`, `http://2130706433:${listener.port()}/`]) {
      expect(await refusedCode(agent, url), url).toBe(OUTBOUND_REFUSED);
    }
    await agent.close();
    expect(listener.connections()).toBe(before);
  });
});

describe('the node:http agent (for libraries that do not use undici)', () => {
  const listener = internalListener();

  function get(url: string, agent: http.Agent): Promise<string> {
    return new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
  }
  const resolve: Resolve = async (name) => (name === 'intranet.test' ? [{ address: '10.0.0.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);

  it('refuses literals and names that resolve inside, before any socket; reaches loopback only when allowed', async () => {
    const strictAgent = createOutboundNodeAgent(strict, { resolve });
    const before = listener.connections();
    const sockets = await socketsDuring(async () => {
      await expect(get(`http://127.0.0.1:${listener.port()}/`, strictAgent)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
      await expect(get(`http://[::ffff:127.0.0.1]:${listener.port()}/`, strictAgent)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    });
    expect(sockets).toBe(0);
    await expect(get(`http://intranet.test:${listener.port()}/`, strictAgent)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    await expect(get(`http://loop.test:${listener.port()}/`, strictAgent)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    expect(listener.connections()).toBe(before);
    const cliAgent = createOutboundNodeAgent(cli, { resolve });
    expect(await get(`http://loop.test:${listener.port()}/`, cliAgent)).toBe('internal');
    await expect(get(`http://intranet.test:${listener.port()}/`, cliAgent)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
    strictAgent.destroy();
    cliAgent.destroy();
  });
});

describe('scope: scheme, host and port', () => {
  it('keeps a crawl on its start origin: another port of the same host is out', () => {
    const scope = createScope({ startUrls: ['http://127.0.0.1:8000/docs/'], domainFilter: null, urlPatterns: [], excludePatterns: [] });
    expect(scope.allows(new URL('http://127.0.0.1:8000/docs/a.html'))).toBe(true);
    expect(scope.allows(new URL('http://127.0.0.1:9000/docs/a.html'))).toBe(false);
    expect(scope.allows(new URL('https://127.0.0.1:8000/docs/a.html'))).toBe(false);
  });

  it('lets a default-port site move between http and https, and keeps the domain filter to http(s)', () => {
    const scope = createScope({ startUrls: ['http://docs.example.com/'], domainFilter: null, urlPatterns: [], excludePatterns: [] });
    expect(scope.allows(new URL('https://docs.example.com/a'))).toBe(true);
    expect(scope.allows(new URL('https://docs.example.com:8443/a'))).toBe(false);
    const domain = createScope({ startUrls: ['https://example.com/'], domainFilter: 'example.com', urlPatterns: [], excludePatterns: [] });
    expect(domain.allows(new URL('https://api.example.com:8443/x'))).toBe(true);
    expect(domain.allows(new URL('ftp://api.example.com/x'))).toBe(false);
    expect(domain.allows(new URL('https://notexample.com/x'))).toBe(false);
  });
});

describe('properties', () => {
  const privateV4 = fc.oneof(
    fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
  );
  const asNumber = (o: number[]) => ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;
  const hex = (n: number) => `0x${n.toString(16)}`;

  it('never throws on any string as a URL, a host or an allow-list', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((s) => `http://${s}/`),
        ),
        (s) => {
          const a = refusalForUrl(s, strict);
          const b = refusalFor(s, strict);
          expect(a === null || typeof a === 'string').toBe(true);
          expect(typeof b).toBe('string');
          try {
            parseAllowHosts(s);
          } catch (error) {
            expect(error).toBeInstanceOf(Error);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws on any IP address a resolver could answer, and admits it only when it is plain unicast', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV4Extended(), fc.ipV6()), (ip) => {
        const message = refusalFor(ip, strict);
        expect(message === null || message.startsWith('refused: ')).toBe(true);
        if (/^(10|127)\./.test(ip) || /^192\.168\./.test(ip) || /^f[cd][0-9a-f]{2}:/i.test(ip) || /^fe[89ab][0-9a-f]:/i.test(ip) || /^::1?$/.test(ip)) expect(message).not.toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it('never admits a private address, in any spelling the URL parser accepts', () => {
    fc.assert(
      fc.property(privateV4, fc.constantFrom('dotted', 'decimal', 'hex', 'mapped', 'mappedHex'), (octets, form) => {
        const dotted = octets.join('.');
        const host = {
          dotted,
          decimal: String(asNumber(octets)),
          hex: hex(asNumber(octets)),
          mapped: `[::ffff:${dotted}]`,
          mappedHex: `[::ffff:${((octets[0]! << 8) + octets[1]!).toString(16)}:${((octets[2]! << 8) + octets[3]!).toString(16)}]`,
        }[form];
        expect(refusalForUrl(`http://${host}:8080/x`, strict)).toMatch(/^refused: /);
        expect(refusalFor(dotted, strict)).toMatch(/^refused: /);
      }),
      { numRuns: 2000 },
    );
  });

  it('never dials a private address whatever a resolver answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(privateV4, { minLength: 1, maxLength: 4 }), async (list) => {
        const resolve: Resolve = async () => list.map((o) => ({ address: o.join('.'), family: 4 }));
        await expect(admittedAddresses('any.test', strict, resolve)).rejects.toMatchObject({ code: OUTBOUND_REFUSED });
      }),
      { numRuns: 300 },
    );
  });
});
