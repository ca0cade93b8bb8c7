-- Git repositories as a document producer (issue #33): a source checked out from a repository is kind 'git';
-- its files go through the upload jobs and workers, and a file may say how it is to be read (a source file
-- from examples/ is stored wrapped as markdown, so its path's extension no longer tells its format).
ALTER TABLE sources DROP CONSTRAINT sources_kind_check;
ALTER TABLE sources ADD CONSTRAINT sources_kind_check CHECK (kind IN ('crawl', 'upload', 'git'));

ALTER TABLE upload_files ADD COLUMN content_type text;
