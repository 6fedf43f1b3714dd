/**
 * The bus the functions publish hints on: EventBridge, its client created on first use
 * from the configuration (the local bus's endpoint under `npm start`).
 */
export { lazyEventPublisher } from '../adapters/eventbridge/publisher';
export type { EventPublisher } from '../ports/event-publisher';
