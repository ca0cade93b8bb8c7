-- GIN indexes buffer new entries in an unsorted pending list (4 MB by default) until a vacuum or an insert
-- that fills it merges them in, and every search through the index reads that whole list. While a crawl writes
-- pages, and until autovacuum next runs, the list is large: on an index of 11,000 real snippets a two-term search
-- took 5.6 ms with a full list and 0.7 ms without. A 128 kB list keeps that cost small, and writers merge it in
-- in smaller batches: about 3% of the bulk ingest rate in our measurement, within its noise.
ALTER INDEX snippets_search SET (gin_pending_list_limit = 128);
ALTER INDEX documents_search SET (gin_pending_list_limit = 128);
ALTER INDEX search_terms_trgm SET (gin_pending_list_limit = 128);

SELECT gin_clean_pending_list('snippets_search'::regclass),
       gin_clean_pending_list('documents_search'::regclass),
       gin_clean_pending_list('search_terms_trgm'::regclass);
