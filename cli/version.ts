/** `kubectl ome version`: the plugin's version and commit, and the Node.js that runs it. */
import type { BuildInfo } from './build-info';
import type { CliIO } from './env';
import { formatStructured, type OutputFormat } from './output';

export interface VersionReport {
  pluginVersion: string;
  gitCommit: string;
  nodeVersion: string;
}

/** Versions print as kubectl prints its own: with a leading `v`. */
export function versionReport(info: BuildInfo, nodeVersion: string): VersionReport {
  const version = info.version.startsWith('v') ? info.version : `v${info.version}`;
  return { pluginVersion: version, gitCommit: info.commit, nodeVersion };
}

export function runVersion(io: CliIO, report: VersionReport, output: OutputFormat): number {
  if (output === 'json' || output === 'yaml') {
    io.stdout.write(formatStructured(report, output));
    return 0;
  }
  io.stdout.write(`Plugin Version: ${report.pluginVersion}\nGit Commit: ${report.gitCommit || 'unknown'}\nNode Version: ${report.nodeVersion}\n`);
  return 0;
}
