// Cluster-wide RPC methods: time (slots, heights, epochs), blockhashes, health and fee markets.
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { FIRST_SLOT, SLOTS_PER_EPOCH, type SolanaDevnetChain } from './chain.js';
import { API_VERSION, commitmentOf, withContext, type Methods } from './common.js';
import { configParam, integerParam, invalidParams, stringParam } from './json.js';

const FEATURE_SET = 0;
const PERFORMANCE_SAMPLES_MAX = 720;

export function clusterMethods(chain: SolanaDevnetChain, seed: string): Methods {
  const genesisHash = getBase58Decoder().decode(createHash('sha256').update(`${seed}:genesis`).digest());
  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': API_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => genesisHash,
    getSlot: (params) => chain.slotAt(commitmentOf(configParam(params, 0))),
    getBlockHeight: (params) => chain.blockHeightOf(chain.slotAt(commitmentOf(configParam(params, 0)))),
    getTransactionCount: () => chain.totalTransactions,
    minimumLedgerSlot: () => FIRST_SLOT,
    getFirstAvailableBlock: () => FIRST_SLOT,
    getEpochInfo: (params) => {
      const slot = chain.slotAt(commitmentOf(configParam(params, 0)));
      return {
        absoluteSlot: slot,
        blockHeight: chain.blockHeightOf(slot),
        epoch: slot / SLOTS_PER_EPOCH,
        slotIndex: slot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        transactionCount: chain.totalTransactions,
      };
    },
    getEpochSchedule: () => ({
      firstNormalEpoch: 0,
      firstNormalSlot: 0,
      leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
      slotsPerEpoch: SLOTS_PER_EPOCH,
      warmup: false,
    }),
    getLatestBlockhash: (params) => {
      const commitment = commitmentOf(configParam(params, 0));
      return withContext(chain, commitment, chain.latestBlockhash(commitment));
    },
    isBlockhashValid: (params) => {
      const blockhash = stringParam(params, 0, 'blockhash');
      const commitment = commitmentOf(configParam(params, 1));
      return withContext(chain, commitment, chain.isBlockhashValid(blockhash, chain.slotAt(commitment)));
    },
    // Nobody competes for block space here, so no slot has a non-zero minimum priority fee.
    getRecentPrioritizationFees: (params) => {
      if (params[0] !== undefined && !Array.isArray(params[0])) throw invalidParams('expected an array of addresses');
      return [];
    },
    getRecentPerformanceSamples: (params) => {
      const limit = params[0] === undefined ? PERFORMANCE_SAMPLES_MAX : Number(integerParam(params, 0, 'limit'));
      if (limit > PERFORMANCE_SAMPLES_MAX) throw invalidParams(`limit must be at most ${PERFORMANCE_SAMPLES_MAX}`);
      const sample = chain.performanceSample();
      if (!sample || limit === 0) return [];
      return [
        {
          slot: chain.slotAt('processed'),
          numSlots: sample.slots,
          numTransactions: sample.transactions,
          numNonVoteTransactions: sample.transactions,
          samplePeriodSecs: sample.seconds,
        },
      ];
    },
  };
}
