#!/usr/bin/env node
import 'reflect-metadata';
import { processIO } from './cli-io.js';
import { runCli } from './skein-cli.js';

const code = await runCli(process.argv.slice(2), processIO());
// Flush stdout before exiting: an SDK's keep-alive sockets would otherwise hold the process open.
process.stdout.write('', () => process.exit(code));
