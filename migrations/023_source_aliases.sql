-- Other names a library is known by (a registry package's repository name, say): name resolution and
-- search_libraries match them as they match the name. Set by `docdex add` through setSourceAliases().
ALTER TABLE sources ADD COLUMN aliases text[] NOT NULL DEFAULT '{}';
