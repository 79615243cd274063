#!/usr/bin/env node
// `writ-serve`: the seven Writ services in this one process (apps/serve/dist). Build it first: npx nx run @writ/serve:build
import '../dist/main.js';
