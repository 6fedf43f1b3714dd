/**
 * Store throughput against DynamoDB Local: lease acquire+release round trips and idempotency
 * claims per second, each beside plain GetItem round trips per second in the same run.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClient, createDynamoStores, leaseItemKey } from '../shared/adapters/dynamodb';
import { ensureTable, startDynamoDbLocal } from '../local/dynamodb-local';
import { compare, medianMs } from './harness';
import type { BenchResult, BenchSuite } from './harness';

/** Sequential operations per sample; the rate is BATCH / median sample time. */
const BATCH = 50;
const TABLE = 'bench-store';

async function perSecond(operation: (i: number) => Promise<unknown>): Promise<number> {
  let counter = 0;
  const ms = await medianMs(
    async () => {
      for (let i = 0; i < BATCH; i += 1) await operation((counter += 1));
    },
    5,
    1,
  );
  return ms === 0 ? 0 : (BATCH * 1000) / ms;
}

const suite: BenchSuite = {
  name: 'store',
  async run(): Promise<BenchResult[]> {
    const local = await startDynamoDbLocal();
    const client = createDynamoClient({ endpoint: local.endpoint, region: 'us-east-1' });
    try {
      await ensureTable(client, TABLE);
      const stores = createDynamoStores(client, { tableName: TABLE });
      const run = randomUUID();
      const baselineKey = leaseItemKey(`bench-${run}-get`);
      const getItem = (): Promise<unknown> => client.send(new GetCommand({ TableName: TABLE, Key: baselineKey }));
      const leaseRoundTrip = async (): Promise<void> => {
        const lease = await stores.leases.acquire(`bench-${run}-lease`, 'bench', 30_000);
        if (lease === undefined) throw new Error('bench lease unexpectedly held');
        await stores.leases.release(lease);
      };
      const claim = (i: number): Promise<unknown> =>
        stores.idempotency.claim(`bench-${run}-${i}`, { inProgressTtlMs: 30_000, recordTtlSeconds: 600 });
      // Java and the SDK are cold after start: warm every path before measuring anything.
      for (let i = 0; i < 150; i += 1) await Promise.all([getItem(), leaseRoundTrip(), claim(-i)]);

      // Each figure gets its own baseline measured just before it, so drift in load cancels.
      const leaseBaseline = { name: 'GetItem round trips', value: await perSecond(getItem), unit: 'ops/s' };
      const leaseRate = await perSecond(leaseRoundTrip);
      const claimBaseline = { name: 'GetItem round trips', value: await perSecond(getItem), unit: 'ops/s' };
      const claimRate = await perSecond(claim);
      return [
        compare('store', { name: 'lease acquire+release round trips', value: leaseRate, unit: 'ops/s' }, leaseBaseline, '2 conditional writes each'),
        compare('store', { name: 'idempotency claims (fresh keys)', value: claimRate, unit: 'ops/s' }, claimBaseline, '1 conditional put each'),
      ];
    } finally {
      client.destroy();
      await local.stop();
    }
  },
};

export default suite;
