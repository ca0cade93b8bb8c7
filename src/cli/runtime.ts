// The oclif bin/run.js starts the CLI with, imported from dist/ rather than from node_modules: in the built CLI
// this file is a bundle entry (scripts/bundle.ts), so the oclif that parses argv and loads a command is the copy
// the bundled commands extend, read from one chunk rather than sixty-odd files.
export { execute } from '@oclif/core';
