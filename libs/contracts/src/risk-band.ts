import { z } from 'zod';

/** Risk bands (Hermit 16.2), lowest first. */
export const RiskBand = z.enum(['low', 'moderate', 'high', 'critical']);
export type RiskBand = z.infer<typeof RiskBand>;
