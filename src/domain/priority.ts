// What a merchant asks routing to favour when it quotes a payment (the spec's `priority`). Routing weighs each one
// (src/routing/score.ts); the domain and the stored rows only name it.
export const PRIORITIES = ['low_fee', 'fast', 'reliable'] as const;
export type Priority = (typeof PRIORITIES)[number];
