#!/usr/bin/env node
// mintctl: runs the TypeScript CLI with the Node 24 that npm puts first on PATH.
import '../src/main.ts';
