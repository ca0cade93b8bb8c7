-- Screening at index time (issue 36): extraction flags a snippet whose text, or whose page, holds instructions
-- aimed at AI assistants (`possible_prompt_injection`), and names the sentence that did it. Read only for the
-- rows a search returns; a constant default adds the columns without rewriting the table.
ALTER TABLE snippets ADD COLUMN flags text[] NOT NULL DEFAULT '{}';
ALTER TABLE snippets ADD COLUMN flagged_passage text;
