#!/usr/bin/env node
/**
 * The `rxkube` command: `rxkube watch <resource>`, `rxkube crd generate / install / types` and `rxkube demo`.
 * Run `rxkube --help` or `rxkube watch --help` for the flags.
 */
import '../nodeVersion.js';
import { createProgram } from './program.js';

await createProgram().parseAsync(process.argv);
