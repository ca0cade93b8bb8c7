-- Screening of whole pages (issue 48): extraction stores the page's own finding (its prose, title, comments and
-- hidden text), so a read of the page (get_page_markdown) carries it as search results carry their snippets'.
-- '{}' is a page screened and found clean; NULL a page stored before pages were screened, which a read screens
-- from its stored text. A page whose snippets were flagged takes their finding now: hidden text that flagged them
-- is no longer stored to be screened again. Constant (null) defaults: the columns are added without a rewrite.
ALTER TABLE documents ADD COLUMN flags text[];
ALTER TABLE documents ADD COLUMN flagged_passage text;

UPDATE documents d
   SET flags = s.flags, flagged_passage = s.flagged_passage
  FROM (SELECT DISTINCT ON (document_id) document_id, flags, flagged_passage
          FROM snippets
         WHERE flags <> '{}'
         ORDER BY document_id, position) s
 WHERE d.id = s.document_id;
