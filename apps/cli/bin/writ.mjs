#!/usr/bin/env node
// The `writ` command: runs the built CLI (apps/cli/dist). Build it first: npx nx run @writ/cli:build
import { run } from '../dist/main.js';

// `writ … | head`: the reader went away; stop quietly like other Unix tools instead of crashing on EPIPE.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await run(process.argv.slice(2));
