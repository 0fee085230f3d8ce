// Health of the RPC node and of the chain behind it, for routing. Only getSlot and getLatestBlockhash are required;
// performance samples and prioritization fees refine the picture when the node offers them.
import type { HealthProbe } from '../port.js';
import { ChainError } from '../port.js';
import { transferFee } from './fees.js';
import { call, type RpcClient } from './rpc.js';

export const TYPICAL_FINALITY_SECONDS = 13;
const SLOTS_TO_FINALITY = 32;
const NOMINAL_SLOT_SECONDS = 0.4;
const PERFORMANCE_SAMPLES = 4; // one per minute

export async function probeNode(
  client: RpcClient,
  solUsdPrice: number,
  computeUnitPrice: () => Promise<{ microLamports: bigint; maxMicroLamports: bigint }>,
): Promise<HealthProbe> {
  const started = performance.now();
  try {
    await Promise.all([
      call(client, 'getSlot', client.rpc.getSlot({ commitment: 'confirmed' })),
      call(client, 'getLatestBlockhash', client.rpc.getLatestBlockhash({ commitment: 'confirmed' })),
    ]);
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started);
    return { ok: false, latencyMs, error: error instanceof ChainError ? error.shortMessage : 'Solana RPC failed' };
  }
  const latencyMs = Math.round(performance.now() - started);
  const [price, slotSeconds] = await Promise.all([computeUnitPrice(), averageSlotSeconds(client)]);
  const signals: number[] = [];
  // Slots slower than nominal mean skipped leaders or a struggling cluster; twice nominal counts as saturated.
  if (slotSeconds !== undefined) signals.push(clamp01(slotSeconds / NOMINAL_SLOT_SECONDS - 1));
  if (price.microLamports > 0n && price.maxMicroLamports > 0n) {
    signals.push(clamp01(Number(price.microLamports) / Number(price.maxMicroLamports)));
  }
  return {
    ok: true,
    latencyMs,
    fee: transferFee(price.microLamports, solUsdPrice),
    finalitySeconds:
      slotSeconds === undefined ? TYPICAL_FINALITY_SECONDS : Math.max(1, SLOTS_TO_FINALITY * slotSeconds + 0.4),
    ...(signals.length > 0 ? { congestion: Math.max(...signals) } : {}),
  };
}

async function averageSlotSeconds(client: RpcClient): Promise<number | undefined> {
  try {
    const samples = await call(
      client,
      'getRecentPerformanceSamples',
      client.rpc.getRecentPerformanceSamples(PERFORMANCE_SAMPLES),
    );
    let slots = 0;
    let seconds = 0;
    for (const sample of samples) {
      slots += Number(sample.numSlots);
      seconds += sample.samplePeriodSecs;
    }
    return slots > 0 && seconds > 0 ? seconds / slots : undefined;
  } catch {
    return undefined;
  }
}

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}
