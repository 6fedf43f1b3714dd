/**
 * The functions' loggers: Powertools' JSON lines, without the fields every line of a
 * function's log group would repeat. CloudWatch Logs already names the function (the log
 * group) and its version (the log stream), and Lambda's own REPORT line gives its memory,
 * so a line keeps the level, message, time, service, the request id (to find the
 * invocation), the cold start when it is one, the X-Ray trace when there is one, and what
 * the line itself says. About 120 bytes less a line than Powertools' default format.
 */
import { Logger, LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

export class CompactLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    const context = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        ...(context?.coldStart ? { cold_start: true } : {}),
        ...(context?.awsRequestId ? { function_request_id: context.awsRequestId } : {}),
        ...(attributes.xRayTraceId ? { xray_trace_id: attributes.xRayTraceId } : {}),
      },
    }).addAttributes(additionalLogAttributes);
  }
}

/** A function's logger (`POWERTOOLS_LOG_LEVEL` sets its level, as for any Powertools logger). */
export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName, logFormatter: new CompactLogFormatter() });
}
