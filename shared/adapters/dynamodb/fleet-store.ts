import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/errors';
import type { FleetDriftReport } from '../../domain/fleet/fleet-drift';
import type { SyncWave } from '../../domain/fleet/sync-wave';
import type { FreezeWindow } from '../../domain/fleet/freeze-window';
import type { FleetStore } from '../../ports/store';
import { isConditionalCheckFailed, mapDynamoError } from './errors';
import { queryPartition } from './query';
import { DEFAULT_TABLE_NAME, DRIFT_SORT_PREFIX, FLEET_PARTITION, FREEZE_SORT_PREFIX, WAVE_SORT_PREFIX, driftReportItemKey, freezeWindowItemKey, waveItemKey } from './table';
import type { DriftReportItem, DynamoStoreOptions, FreezeWindowItem, WaveItem } from './table';

/** Finished waves stay readable this long, then TTL removes them. */
export const FINISHED_WAVE_RETENTION_SECONDS = 90 * 24 * 3600;

function toWaveItem(wave: SyncWave): WaveItem {
  return {
    ...waveItemKey(wave.id),
    wave: JSON.stringify(wave),
    version: wave.version,
    waveState: wave.state,
    ...(wave.state === 'Running' ? {} : { expiresAt: Math.floor(wave.updatedAt / 1000) + FINISHED_WAVE_RETENTION_SECONDS }),
  };
}

function fromWaveItem(item: WaveItem): SyncWave {
  // The version attribute is the one the conditions check; it wins over the copy in the JSON.
  return { ...(JSON.parse(item.wave) as SyncWave), version: Number(item.version) };
}

/**
 * Sync waves, drift reports and freeze windows in the `FLEET` partition. A wave is created with
 * `attribute_not_exists(pk)` and replaced with `version = :read`, so each step of a wave
 * is taken by one writer only, whatever the retries and concurrent invocations.
 */
export class DynamoFleetStore implements FleetStore {
  private readonly tableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    options: DynamoStoreOptions = {},
  ) {
    this.tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  }

  async createWave(wave: SyncWave): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.tableName, Item: toWaveItem({ ...wave, version: 0 }), ConditionExpression: 'attribute_not_exists(pk)' }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new ConflictError(`sync wave ${wave.id} already exists`, { cause: error });
      throw mapDynamoError(error, `create sync wave ${wave.id}`);
    }
  }

  async getWave(id: string): Promise<SyncWave | undefined> {
    try {
      const output = await this.client.send(new GetCommand({ TableName: this.tableName, Key: waveItemKey(id), ConsistentRead: true }));
      const item = output.Item as WaveItem | undefined;
      return item === undefined ? undefined : fromWaveItem(item);
    } catch (error) {
      throw mapDynamoError(error, `get sync wave ${id}`);
    }
  }

  async listWaves(): Promise<SyncWave[]> {
    return (await this.query<WaveItem>(WAVE_SORT_PREFIX, 'list sync waves')).map(fromWaveItem);
  }

  async saveWave(wave: SyncWave): Promise<SyncWave> {
    const saved = { ...wave, version: wave.version + 1 };
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: toWaveItem(saved),
          ConditionExpression: 'version = :read',
          ExpressionAttributeValues: { ':read': wave.version },
        }),
      );
      return saved;
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new ConflictError(`sync wave ${wave.id} changed since version ${wave.version} was read`, { cause: error });
      throw mapDynamoError(error, `save sync wave ${wave.id}`);
    }
  }

  async putDriftReport(report: FleetDriftReport): Promise<void> {
    const item: DriftReportItem = { ...driftReportItemKey(report.clusterId), report: JSON.stringify(report) };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    } catch (error) {
      throw mapDynamoError(error, `put drift report ${report.clusterId}`);
    }
  }

  async listDriftReports(): Promise<FleetDriftReport[]> {
    return (await this.query<DriftReportItem>(DRIFT_SORT_PREFIX, 'list drift reports')).map((item) => JSON.parse(item.report) as FleetDriftReport);
  }

  async putFreezeWindow(window: FreezeWindow): Promise<void> {
    const item: FreezeWindowItem = { ...freezeWindowItemKey(window.name), window: JSON.stringify(window) };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    } catch (error) {
      throw mapDynamoError(error, `put freeze window ${window.name}`);
    }
  }

  async listFreezeWindows(): Promise<FreezeWindow[]> {
    return (await this.query<FreezeWindowItem>(FREEZE_SORT_PREFIX, 'list freeze windows')).map((item) => JSON.parse(item.window) as FreezeWindow);
  }

  async deleteFreezeWindow(name: string): Promise<boolean> {
    try {
      const output = await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: freezeWindowItemKey(name), ReturnValues: 'ALL_OLD' }));
      return output.Attributes !== undefined;
    } catch (error) {
      throw mapDynamoError(error, `delete freeze window ${name}`);
    }
  }

  private query<T>(prefix: string, action: string): Promise<T[]> {
    return queryPartition<T>(this.client, { tableName: this.tableName, partition: FLEET_PARTITION, sortPrefix: prefix }, action);
  }
}
