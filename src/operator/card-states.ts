/** The lifecycle states an operator may set on a delegatee card's agent stream (RW-003 §4.3), apart so the CLI can name them without loading the operator service. */
export const CARD_STATES = ['active', 'suspended', 'revoked', 'retired'] as const;
