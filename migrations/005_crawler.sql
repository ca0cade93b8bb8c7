-- docdex crawler: politeness across workers, page claims tied to live worker sessions, per-source fetch
-- records for recrawls, and the job-level fields the controller maintains.

-- One row per host (host[:port]) ever crawled. The last request time is taken atomically by whichever worker
-- fetches next, so CRAWL_DELAY holds across every worker process and machine sharing this database.
CREATE TABLE crawl_hosts (
  host            text PRIMARY KEY,
  last_request_at timestamptz NOT NULL
);

-- A worker process holds one session named 'docdex-worker:<uuid>' for its whole life. A killed process loses
-- its session within moments (the kernel closes the socket), so "is this claim's worker alive" needs no
-- heartbeat timeout; it also works across machines because every worker talks to the same server.
CREATE FUNCTION crawl_worker_alive(worker uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT worker IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_stat_activity WHERE application_name = 'docdex-worker:' || worker::text)
$$;

ALTER TABLE crawl_jobs
  ADD COLUMN use_sitemap          boolean NOT NULL DEFAULT false,
  ADD COLUMN pages_per_second     real NOT NULL DEFAULT 0,
  ADD COLUMN eta_seconds          integer,
  -- The worker whose controller drives this job (seeding, sweeping dead claims, progress, completion).
  ADD COLUMN controller_worker_id uuid;

ALTER TABLE crawl_frontier
  -- The URL as first discovered (fragment stripped); `url` is the normalised key used for deduplication.
  ADD COLUMN fetch_url     text,
  ADD COLUMN worker_id     uuid,
  ADD COLUMN claim_token   uuid,
  ADD COLUMN document_url  text,
  ADD COLUMN snippets      integer NOT NULL DEFAULT 0,
  ADD COLUMN skip_reason   text;

-- What the last crawl of a source saw at each URL: the validators for conditional GET, the body hash for
-- the unchanged check, and the outgoing links so a 304 or an unchanged page still expands the frontier
-- without being parsed again.
CREATE TABLE crawl_pages (
  source_id     uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
  url           text NOT NULL,
  document_url  text,
  content_hash  text,
  etag          text,
  last_modified text,
  links         text[] NOT NULL DEFAULT '{}',
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source_id, url)
);

-- robots.txt as fetched once per job and origin, shared by every worker of the job.
CREATE TABLE crawl_robots (
  job_id      uuid NOT NULL REFERENCES crawl_jobs (id) ON DELETE CASCADE,
  origin      text NOT NULL,
  status      integer NOT NULL,
  body        text NOT NULL DEFAULT '',
  fetched_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, origin)
);

-- Takes the next request slot for a host: 0 when taken now, else the milliseconds to wait before asking
-- again. clock_timestamp() under the row lock, not now(), so two takers never see the same instant.
CREATE FUNCTION crawl_take_host_slot(p_host text, p_spacing_seconds double precision) RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE
  took boolean;
  last_at timestamptz;
BEGIN
  INSERT INTO crawl_hosts AS h (host, last_request_at) VALUES (p_host, clock_timestamp())
  ON CONFLICT (host) DO UPDATE SET last_request_at = clock_timestamp()
    WHERE h.last_request_at <= clock_timestamp() - make_interval(secs => p_spacing_seconds)
  RETURNING true INTO took;
  IF took THEN
    RETURN 0;
  END IF;
  SELECT h.last_request_at INTO last_at FROM crawl_hosts h WHERE h.host = p_host;
  RETURN greatest(1, extract(epoch FROM (last_at + make_interval(secs => p_spacing_seconds) - clock_timestamp())) * 1000);
END
$$;

-- Claims one frontier row for a worker. Serialised per job by an advisory lock so the concurrency cap
-- (max_concurrent claims held by live workers) is exact across every worker; each statement below takes a
-- fresh snapshot, so the count sees claims committed while this call waited for the lock.
-- Outcomes: claimed, throttled (cap reached: ask again shortly), busy (a live worker holds it),
-- finished (already processed), missing, not_running (job cancelled, failed, completed or not started).
CREATE FUNCTION crawl_claim_page(p_job uuid, p_url text, p_worker uuid, p_token uuid)
RETURNS TABLE (outcome text, depth integer, fetch_url text, attempts integer)
LANGUAGE plpgsql AS $$
DECLARE
  job_status text;
  job_cap integer;
  row_status text;
  row_worker uuid;
  held integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_job::text, 7380412100));
  SELECT j.status, j.max_concurrent INTO job_status, job_cap FROM crawl_jobs j WHERE j.id = p_job;
  IF job_status IS DISTINCT FROM 'running' THEN
    RETURN QUERY SELECT 'not_running'::text, NULL::integer, NULL::text, NULL::integer;
    RETURN;
  END IF;
  SELECT f.status, f.worker_id INTO row_status, row_worker FROM crawl_frontier f WHERE f.job_id = p_job AND f.url = p_url;
  IF row_status IS NULL THEN
    RETURN QUERY SELECT 'missing'::text, NULL::integer, NULL::text, NULL::integer;
    RETURN;
  END IF;
  IF row_status NOT IN ('pending', 'fetching') THEN
    RETURN QUERY SELECT 'finished'::text, NULL::integer, NULL::text, NULL::integer;
    RETURN;
  END IF;
  IF row_status = 'fetching' AND crawl_worker_alive(row_worker) THEN
    RETURN QUERY SELECT 'busy'::text, NULL::integer, NULL::text, NULL::integer;
    RETURN;
  END IF;
  SELECT count(DISTINCT f.claim_token) INTO held FROM crawl_frontier f
   WHERE f.job_id = p_job AND f.status = 'fetching' AND crawl_worker_alive(f.worker_id);
  IF held >= job_cap THEN
    RETURN QUERY SELECT 'throttled'::text, NULL::integer, NULL::text, NULL::integer;
    RETURN;
  END IF;
  RETURN QUERY
    UPDATE crawl_frontier f SET status = 'fetching', worker_id = p_worker, claim_token = p_token,
           attempts = f.attempts + 1, updated_at = now()
     WHERE f.job_id = p_job AND f.url = p_url
    RETURNING 'claimed'::text, f.depth, coalesce(f.fetch_url, f.url), f.attempts;
END
$$;

-- Adopts one job that needs a controller: queued, or running with its controller's worker gone.
CREATE FUNCTION crawl_adopt_job(p_worker uuid) RETURNS SETOF uuid
LANGUAGE sql AS $$
  UPDATE crawl_jobs j SET controller_worker_id = p_worker, updated_at = now()
   WHERE j.id = (
     SELECT c.id FROM crawl_jobs c
      WHERE c.status IN ('queued', 'running')
        AND (c.controller_worker_id IS NULL OR NOT crawl_worker_alive(c.controller_worker_id))
      ORDER BY c.created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
  RETURNING j.id
$$;
