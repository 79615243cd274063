import { z } from 'zod';

/** Trust tiers of claims and evidence (Hermit 15.4). */
export const TrustTier = z.enum(['untrusted', 'observed', 'verified', 'user_asserted', 'policy_asserted']);
export type TrustTier = z.infer<typeof TrustTier>;
