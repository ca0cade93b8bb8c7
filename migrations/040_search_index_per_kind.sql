-- The search index splits by unit kind (issue 52): one partial index for snippets, one for sections. A search
-- finds each kind's candidates in a pool of its own (core/search/search.ts byKind), so each of its tiers reads
-- the index twice, once per kind. Over one index both reads decode the same entries and visit the heap rows of
-- both kinds, checking each against the query (a phrase or the terms left out of the index read) before
-- dropping the other kind's: every candidate row was visited twice since sections came (migration 038). A
-- partial index per kind holds only its kind's rows, so each read visits only its own. The rows each read
-- returns are the same, in the same (table) order, so a search finds the same candidates. The entries are the
-- same in all, so a write costs the same; each index is rebuilt once here, from the rows, not row by row.
DROP INDEX snippets_search;
CREATE INDEX snippets_search ON snippets USING gin (language, search_vector) WHERE kind = 'snippet';
CREATE INDEX snippets_search_sections ON snippets USING gin (language, search_vector) WHERE kind = 'section';
