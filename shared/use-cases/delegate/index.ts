/** Delegate mode: reading upstream OME's status, and the levers upstream gives its users. */
export * from './levers';
export * from './report';
export * from './upstream-state';
