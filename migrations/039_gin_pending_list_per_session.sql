-- The search indexes' pending-list limit moves from the indexes to the writing session (issue 52). As an index
-- option (migrations 012, 013) it bound every writer alike: a pack import, which writes a whole new library in
-- one transaction, merged its entries into the live index every 512 kB, re-encoding the posting lists of the
-- common words once per merge. Merged in one pass per library instead (the import sets a larger limit for its
-- own transaction, core/pack/install.ts), the same rows went in 25-40% faster on the bench's 210,000-row index.
-- An index option overrides the session setting, so it goes; docdex's connections set the same 512 kB as
-- before for every other writer (core/db/connect.ts), and a search still reads at most what one import's
-- transaction leaves pending.
ALTER INDEX snippets_search RESET (gin_pending_list_limit);
ALTER INDEX documents_search RESET (gin_pending_list_limit);
