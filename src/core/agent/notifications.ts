import type pg from 'pg';
import webpush from 'web-push';
import { z } from 'zod';
import type { Config } from '../config.js';
import { fetch } from 'undici';
import type { Agent } from 'undici';
import { UserError, ValidationError } from '../errors.js';
import { createOutboundAgent } from '../net/outbound.js';
import { hostExplicitlyAllowed, isOutboundRefusal, refusalForUrl } from '../net/policy.js';
import type { OutboundPolicy } from '../net/policy.js';

/**
 * Web push to the user's registered devices. web-push builds each request (payload encryption and the
 * VAPID JWT); docdex sends it with undici's fetch through the outbound policy (net/outbound.ts): an
 * endpoint is a URL anyone who can subscribe chooses, so it is held to the crawler's rules (public
 * addresses only, unless listed in CRAWL_ALLOW_HOSTS), checked when subscribing and again at connect time.
 * A 404 or 410 from a push service means the subscription is gone for good, so it is deleted.
 */

/** Push never reaches loopback on its own: a subscription comes over HTTP, not from the local user. */
function pushPolicy(config: Pick<Config, 'outbound'>): OutboundPolicy {
  return { allow: config.outbound.allowHosts, allowLoopback: false };
}

/**
 * Refuses an endpoint the outbound policy refuses on sight (an internal IP literal, localhost), and plain
 * http except to a host the operator listed in CRAWL_ALLOW_HOSTS (a push relay inside their network).
 */
export function assertPushEndpointAllowed(config: Pick<Config, 'outbound'>, endpoint: string): void {
  const policy = pushPolicy(config);
  const refusal = refusalForUrl(endpoint, policy);
  const hint = 'Push endpoints are the https URLs of public push services; list an internal relay in CRAWL_ALLOW_HOSTS.';
  if (refusal) throw new ValidationError(`Invalid push endpoint: ${refusal}.`, { hint, details: [{ path: 'endpoint', message: refusal }] });
  const url = new URL(endpoint);
  if (url.protocol !== 'https:' && !hostExplicitlyAllowed(url.hostname, policy.allow)) {
    throw new ValidationError('Invalid push endpoint: it must be an https URL.', { hint, details: [{ path: 'endpoint', message: 'must be https' }] });
  }
}

export const NotificationInput = z
  .object({
    title: z.string().min(1).max(120),
    body: z.string().min(1).max(500),
    url: z.string().min(1).max(500).optional(),
    tag: z.string().max(80).optional(),
    priority: z.enum(['normal', 'high']).optional(),
  })
  .strict()
  .meta({ id: 'NotificationSend' });
export type NotificationInput = z.infer<typeof NotificationInput>;

export const NotificationResult = z.object({ delivered: z.number(), expired: z.number(), failed: z.number(), noSubscriptions: z.boolean() }).meta({ id: 'NotificationResult' });
export type NotificationResult = z.infer<typeof NotificationResult>;

export const PushSubscriptionInput = z
  .object({
    endpoint: z
      .string()
      .max(2048)
      .url()
      .refine((v) => {
        if (!URL.canParse(v)) return false;
        const u = new URL(v);
        // Real push services are https; plain http only to a host in CRAWL_ALLOW_HOSTS (assertPushEndpointAllowed).
        return u.protocol === 'https:' || u.protocol === 'http:';
      }, 'must be an https URL'),
    // What PushSubscription.toJSON() gives along with the endpoint and keys; not stored.
    expirationTime: z.number().nullable().optional(),
    keys: z
      .object({
        p256dh: z
          .string()
          .max(102)
          .regex(/^[A-Za-z0-9_-]{80,100}={0,2}$/, 'a base64url P-256 public key'),
        auth: z
          .string()
          .max(34)
          .regex(/^[A-Za-z0-9_-]{16,32}={0,2}$/, 'a base64url 16-byte secret'),
      })
      .strict(),
    userId: z
      .string()
      .max(128)
      .regex(/^[A-Za-z0-9._@-]{1,128}$/)
      .optional(),
    userAgent: z.string().max(500).optional(),
  })
  .strict()
  .meta({ id: 'PushSubscriptionCreate' });
export type PushSubscriptionInput = z.infer<typeof PushSubscriptionInput>;

export const PushSubscriptionRecord = z
  .object({
    id: z.number(),
    userId: z.string(),
    endpoint: z.string(),
    userAgent: z.string().nullable(),
    createdAt: z.number(),
    lastSuccessAt: z.number().nullable(),
    lastFailureAt: z.number().nullable(),
    lastError: z.string().nullable(),
  })
  .meta({ id: 'PushSubscription' });
export type PushSubscriptionRecord = z.infer<typeof PushSubscriptionRecord>;

interface SubscriptionRow {
  id: number;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  user_agent: string | null;
  created_at: Date;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_error: string | null;
}

const toRecord = (r: SubscriptionRow): PushSubscriptionRecord => ({
  id: r.id,
  userId: r.user_id,
  endpoint: r.endpoint,
  userAgent: r.user_agent,
  createdAt: r.created_at.getTime(),
  lastSuccessAt: r.last_success_at?.getTime() ?? null,
  lastFailureAt: r.last_failure_at?.getTime() ?? null,
  lastError: r.last_error,
});

/** Push is not configured (no VAPID keys): HTTP 503. */
export function pushNotConfigured(): UserError {
  return new UserError('Push notifications are not configured.', {
    code: 'unavailable',
    hint: 'Set VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY (and VAPID_SUBJECT), e.g. from `npx web-push generate-vapid-keys`.',
  });
}

export function vapidPublicKey(config: Pick<Config, 'agent'>): string {
  if (!config.agent.vapid) throw pushNotConfigured();
  return config.agent.vapid.publicKey;
}

/** Registers a device (or refreshes its keys: one row per endpoint). */
export async function subscribePush(pool: pg.Pool, config: Pick<Config, 'outbound'>, input: PushSubscriptionInput): Promise<{ subscription: PushSubscriptionRecord; created: boolean }> {
  assertPushEndpointAllowed(config, input.endpoint);
  const { rows } = await pool.query<SubscriptionRow & { inserted: boolean }>(
    `INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, user_agent) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (endpoint) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,
       user_agent = excluded.user_agent, last_error = NULL
     RETURNING *, (xmax = 0) AS inserted`,
    [input.userId ?? 'default', input.endpoint, input.keys.p256dh, input.keys.auth, input.userAgent ?? null],
  );
  return { subscription: toRecord(rows[0]!), created: rows[0]!.inserted };
}

export async function unsubscribePush(pool: pg.Pool, endpoint: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM push_subscriptions WHERE endpoint = $1', [endpoint]);
  return (rowCount ?? 0) > 0;
}

export async function listPushSubscriptions(pool: pg.Pool, userId?: string): Promise<PushSubscriptionRecord[]> {
  const { rows } = await pool.query<SubscriptionRow>('SELECT * FROM push_subscriptions WHERE ($1::text IS NULL OR user_id = $1) ORDER BY id', [userId ?? null]);
  return rows.map(toRecord);
}

// A push service that does not answer within this time is counted as failed, not waited on: the agent
// calling send_notification is blocked meanwhile.
const PUSH_TIMEOUT_MS = 10_000;
// A day: a notification about a finished run is stale after that.
const PUSH_TTL_SECONDS = 24 * 60 * 60;

type Vapid = NonNullable<Config['agent']['vapid']>;

/** One delivery: the push service's status, or why there is none. Never throws. */
async function pushToDevice(
  row: SubscriptionRow,
  payload: string,
  options: { vapid: Vapid; urgency: 'high' | 'normal'; dispatcher: Agent; config: Pick<Config, 'outbound'> },
): Promise<{ status?: number; error?: string }> {
  try {
    // Subscribed before the policy, or under an allow-list since narrowed: judged again before sending.
    assertPushEndpointAllowed(options.config, row.endpoint);
    const { vapid } = options;
    const request = webpush.generateRequestDetails({ endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } }, payload, {
      vapidDetails: { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      TTL: PUSH_TTL_SECONDS,
      urgency: options.urgency,
    });
    const response = await fetch(request.endpoint, {
      method: request.method,
      headers: request.headers as Record<string, string>,
      body: request.body as Buffer,
      redirect: 'error',
      signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
      dispatcher: options.dispatcher,
    });
    if (response.ok) {
      await response.body?.cancel();
      return { status: response.status };
    }
    return { status: response.status, error: `push service answered ${response.status}: ${(await response.text()).slice(0, 200)}` };
  } catch (e) {
    // undici's fetch reports "fetch failed" with the refusal as its cause; the cause is what the user needs.
    const error = isOutboundRefusal((e as Error).cause) ? ((e as Error).cause as Error) : (e as Error);
    return { error: error.message.slice(0, 200) };
  }
}

/** Sends one notification to every device of the user. Throws 503 (code unavailable) without VAPID keys. */
export async function sendNotification(pool: pg.Pool, config: Pick<Config, 'agent' | 'outbound'>, userId: string, input: NotificationInput): Promise<NotificationResult> {
  const vapid = config.agent.vapid;
  if (!vapid) throw pushNotConfigured();
  const { rows } = await pool.query<SubscriptionRow>('SELECT * FROM push_subscriptions WHERE user_id = $1 ORDER BY id', [userId]);
  const result: NotificationResult = { delivered: 0, expired: 0, failed: 0, noSubscriptions: rows.length === 0 };
  const payload = JSON.stringify({
    title: input.title,
    body: input.body,
    ...(input.url === undefined ? {} : { url: input.url }),
    ...(input.tag === undefined ? {} : { tag: input.tag }),
    priority: input.priority ?? 'normal',
  });
  const dispatcher = createOutboundAgent(pushPolicy(config), { timeout: PUSH_TIMEOUT_MS });
  const urgency = input.priority === 'high' ? 'high' : 'normal';
  try {
    await Promise.all(
      rows.map(async (row) => {
        const { status, error } = await pushToDevice(row, payload, { vapid, urgency, dispatcher, config });
        if (status !== undefined && status >= 200 && status < 300) {
          result.delivered++;
          await pool.query('UPDATE push_subscriptions SET last_success_at = now(), last_error = NULL WHERE id = $1', [row.id]);
        } else if (status === 404 || status === 410) {
          result.expired++;
          await pool.query('DELETE FROM push_subscriptions WHERE id = $1', [row.id]);
        } else {
          result.failed++;
          await pool.query('UPDATE push_subscriptions SET last_failure_at = now(), last_error = $2 WHERE id = $1', [row.id, error ?? 'unknown error']);
        }
      }),
    );
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
  return result;
}
