/** Child process: imports the modules named on the command line, then prints its memory as JSON. */
for (const name of process.argv.slice(2)) await import(name);
(globalThis as { gc?: () => void }).gc?.();
const { rss, heapUsed } = process.memoryUsage();
process.stdout.write(JSON.stringify({ rss, heapUsed }));
