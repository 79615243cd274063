#!/usr/bin/env node
// The `writ` command: runs the built CLI (apps/cli/dist). Build it first: npx nx run @writ/cli:build
import { run } from '../dist/main.js';

process.exitCode = await run(process.argv.slice(2));
