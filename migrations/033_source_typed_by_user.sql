-- Who named a source's URLs (issue 48): true only when the local user typed its start URLs or repository at the
-- CLI or in the dashboard. A recrawl or re-checkout gets the CLI's loopback permission (and local or ssh git
-- remotes) only when this is true and the local user asks again; what a registry, a lockfile, a .docdex.yml,
-- an API caller or a pack named stays under the remote rules. Sources stored before this are not known to have
-- been typed, so they start false: a `docdex crawl start` of the URL vouches for it again.
ALTER TABLE sources ADD COLUMN typed_by_user boolean NOT NULL DEFAULT false;
