-- The search indexes' pending-list limit moves from the indexes to the writing session (issue 52). As an index
-- option (migrations 012, 013) it bound every writer alike: a pack import, which writes a whole new library in
-- one transaction, merged its entries into the live index every 512 kB, re-encoding the posting lists of the
-- common words once per merge. Merged in one pass per library instead (the import sets a larger limit for its
-- own transaction, core/pack/install.ts), a 10,000-row library's snippet insert took 8.3 / 12.5 s instead of
-- 15.2 / 13.9 s on the bench's 210,000-row index, and an import of 100,000 snippets 5-15% less time (CHANGELOG).
-- An index option overrides the session setting, so it goes; docdex's connections set the same 512 kB as
-- before for every other writer (core/db/connect.ts); a search during an import reads at most the import's
-- 64 MB of pending list.
ALTER INDEX snippets_search RESET (gin_pending_list_limit);
ALTER INDEX documents_search RESET (gin_pending_list_limit);
