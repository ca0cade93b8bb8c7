-- Cheaper liveness checks for the crawler. crawl_claim_page runs once per page and counted the job's live
-- claims by calling crawl_worker_alive for every claimed row, each call planning and scanning the
-- pg_stat_activity view (a join of every backend's status with pg_database and pg_authid): six such scans
-- per page at ten pages in flight, most of the claim's cost. Now the claims are counted plainly, and only a
-- count at the cap is redone with the live sessions, read once straight from pg_stat_get_activity (the
-- view's joins add nothing to this question).

CREATE OR REPLACE FUNCTION crawl_worker_alive(worker uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT worker IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_stat_get_activity(NULL) a WHERE a.application_name = 'docdex-worker:' || worker::text)
$$;

-- Same outcomes and the same per-job advisory lock as before (see 005_crawler.sql).
CREATE OR REPLACE FUNCTION crawl_claim_page(p_job uuid, p_url text, p_worker uuid, p_token uuid)
RETURNS TABLE (outcome text, depth integer, fetch_url text, attempts integer)
LANGUAGE plpgsql AS $$
DECLARE
  job_status text;
  job_cap integer;
  row_status text;
  row_worker uuid;
  held integer;
  live text[];
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
  -- Every claim counts first; only when that reaches the cap do the claims of dead workers (not yet swept)
  -- need telling apart, against the live sessions read once.
  SELECT count(DISTINCT f.claim_token) INTO held FROM crawl_frontier f WHERE f.job_id = p_job AND f.status = 'fetching';
  IF held >= job_cap THEN
    SELECT array_agg(a.application_name) INTO live FROM pg_stat_get_activity(NULL) a WHERE a.application_name LIKE 'docdex-worker:%';
    SELECT count(DISTINCT f.claim_token) INTO held FROM crawl_frontier f
     WHERE f.job_id = p_job AND f.status = 'fetching' AND ('docdex-worker:' || f.worker_id::text) = ANY (live);
  END IF;
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
