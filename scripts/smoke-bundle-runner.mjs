// Runs under the Node binary being checked (Lambda's major), not under tsx: loads one
// function bundle, invokes its handler once with the event given, and writes what came
// back (or what was thrown) as JSON to the result file. Usage:
//   node smoke-bundle-runner.mjs <bundle.mjs> <event.json> <result.json> <function-name>
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const [bundle, eventFile, resultFile, functionName] = process.argv.slice(2);

// What Lambda passes as the context object, with a fixed remaining time.
const context = {
  awsRequestId: `smoke-${functionName}`,
  functionName: `ome-pinning-smoke-${functionName}`,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:eu-west-1:000000000000:function:ome-pinning-smoke-${functionName}`,
  memoryLimitInMB: '512',
  logGroupName: `/aws/lambda/ome-pinning-smoke-${functionName}`,
  logStreamName: 'smoke',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

async function main() {
  const node = process.versions.node;
  let outcome;
  try {
    const module = await import(pathToFileURL(bundle).href);
    if (typeof module.handler !== 'function') {
      outcome = { loaded: false, error: { name: 'TypeError', message: 'the bundle exports no handler function' } };
    } else {
      const event = JSON.parse(await readFile(eventFile, 'utf8'));
      try {
        outcome = { loaded: true, returned: (await module.handler(event, context)) ?? null };
      } catch (error) {
        outcome = { loaded: true, error: { name: error?.name ?? typeof error, message: String(error?.message ?? error), retryable: error?.retryable } };
      }
    }
  } catch (error) {
    outcome = { loaded: false, error: { name: error?.name ?? typeof error, message: String(error?.message ?? error) } };
  }
  await writeFile(resultFile, JSON.stringify({ node, ...outcome }));
}

await main();
// A kept-alive socket or timer in the bundle must not hold the check open.
process.exit(0);
