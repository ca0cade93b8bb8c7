-- Upload jobs (uploads, git checkouts, package READMEs) can be cancelled and resumed like crawls (issue #49):
-- `docdex jobs cancel` leaves the files not yet processed pending, with their content, and `docdex jobs resume`
-- queues them again.
ALTER TABLE upload_jobs DROP CONSTRAINT upload_jobs_status_check;
ALTER TABLE upload_jobs ADD CONSTRAINT upload_jobs_status_check
  CHECK (status IN ('queued', 'processing', 'enhancing', 'completed', 'failed', 'cancelled'));
