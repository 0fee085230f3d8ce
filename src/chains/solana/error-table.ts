// Every Solana transaction and instruction error that @solana/kit knows, keyed by kit's stable error code, mapped
// onto our FailureReason. Kit never renumbers these codes, so the tables are safe to branch on; a test checks that
// no kit code is missing, so a kit upgrade that adds one fails loudly instead of being silently unclassified.
//
// 'unclassified': the caller's default applies ('rpc_error' for a refused send, 'reverted' for a landed failure).
// Instruction errors can depend on which of our instructions failed (see InstructionRole).
import * as kit from '@solana/kit';
import type { FailureReason } from '../port.js';

export type Verdict = FailureReason | 'unclassified' | 'already_processed';
export type InstructionRole = 'transfer' | 'createAta' | 'other';
export type InstructionVerdict = Verdict | Partial<Record<InstructionRole, FailureReason>>;

export const TRANSACTION_ERROR_VERDICTS: Readonly<Record<number, Verdict>> = {
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__UNKNOWN]: 'unclassified',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ACCOUNT_IN_USE]: 'rpc_error', // transient lock contention
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ACCOUNT_LOADED_TWICE]: 'internal_error',
  // The fee payer has never held lamports: "Attempt to debit an account but found no record of a prior credit."
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ACCOUNT_NOT_FOUND]: 'insufficient_gas',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__PROGRAM_ACCOUNT_NOT_FOUND]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INSUFFICIENT_FUNDS_FOR_FEE]: 'insufficient_gas',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ACCOUNT_FOR_FEE]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED]: 'already_processed',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND]: 'blockhash_expired',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__CALL_CHAIN_TOO_DEEP]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__MISSING_SIGNATURE_FOR_FEE]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ACCOUNT_INDEX]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__SIGNATURE_FAILURE]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_PROGRAM_FOR_EXECUTION]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__SANITIZE_FAILURE]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__CLUSTER_MAINTENANCE]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ACCOUNT_BORROW_OUTSTANDING]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__WOULD_EXCEED_MAX_BLOCK_COST_LIMIT]: 'rpc_error', // block full; transient
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__UNSUPPORTED_VERSION]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_WRITABLE_ACCOUNT]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__WOULD_EXCEED_MAX_ACCOUNT_COST_LIMIT]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__WOULD_EXCEED_ACCOUNT_DATA_BLOCK_LIMIT]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__TOO_MANY_ACCOUNT_LOCKS]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__ADDRESS_LOOKUP_TABLE_NOT_FOUND]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ADDRESS_LOOKUP_TABLE_OWNER]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ADDRESS_LOOKUP_TABLE_DATA]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ADDRESS_LOOKUP_TABLE_INDEX]: 'internal_error',
  // The fee would leave the treasury below its rent-exempt minimum.
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_RENT_PAYING_ACCOUNT]: 'insufficient_gas',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__WOULD_EXCEED_MAX_VOTE_COST_LIMIT]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__WOULD_EXCEED_ACCOUNT_DATA_TOTAL_LIMIT]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__DUPLICATE_INSTRUCTION]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INSUFFICIENT_FUNDS_FOR_RENT]: 'insufficient_gas',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__MAX_LOADED_ACCOUNTS_DATA_SIZE_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_LOADED_ACCOUNTS_DATA_SIZE_LIMIT]: 'internal_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__RESANITIZATION_NEEDED]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__PROGRAM_EXECUTION_TEMPORARILY_RESTRICTED]: 'rpc_error',
  [kit.SOLANA_ERROR__TRANSACTION_ERROR__UNBALANCED_TRANSACTION]: 'internal_error',
};

/**
 * Transaction errors that follow from the bytes alone (signatures, message layout), never from the state of the chain:
 * no bank will ever execute these bytes, so a refusal with one of them is final. Every other refusal (a busy account,
 * a full block, missing funds, an instruction error) depends on state that can change while the blockhash is valid,
 * and an earlier send of the same bytes may still land; those stay unresolved until the blockhash has expired.
 */
export const BYTES_NEVER_VALID_ERRORS: ReadonlySet<number> = new Set([
  kit.SOLANA_ERROR__TRANSACTION_ERROR__SIGNATURE_FAILURE,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__SANITIZE_FAILURE,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__ACCOUNT_LOADED_TWICE,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__MISSING_SIGNATURE_FOR_FEE,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_ACCOUNT_INDEX,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__DUPLICATE_INSTRUCTION,
  kit.SOLANA_ERROR__TRANSACTION_ERROR__INVALID_LOADED_ACCOUNTS_DATA_SIZE_LIMIT,
]);

export const INSTRUCTION_ERROR_VERDICTS: Readonly<Record<number, InstructionVerdict>> = {
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__UNKNOWN]: 'unclassified',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__GENERIC_ERROR]: 'unclassified',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_ARGUMENT]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_INSTRUCTION_DATA]: 'internal_error',
  // The token program cannot read the source account: the treasury has no USDC account at all.
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_ACCOUNT_DATA]: { transfer: 'insufficient_funds' },
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_DATA_TOO_SMALL]: 'internal_error',
  // Lamports (rent for the recipient's account) when creating it; tokens when transferring.
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INSUFFICIENT_FUNDS]: {
    createAta: 'insufficient_gas',
    transfer: 'insufficient_funds',
  },
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INCORRECT_PROGRAM_ID]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MISSING_REQUIRED_SIGNATURE]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_ALREADY_INITIALIZED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__UNINITIALIZED_ACCOUNT]: { transfer: 'insufficient_funds' },
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__UNBALANCED_INSTRUCTION]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MODIFIED_PROGRAM_ID]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXTERNAL_ACCOUNT_LAMPORT_SPEND]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXTERNAL_ACCOUNT_DATA_MODIFIED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__READONLY_LAMPORT_CHANGE]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__READONLY_DATA_MODIFIED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__DUPLICATE_ACCOUNT_INDEX]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXECUTABLE_MODIFIED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__RENT_EPOCH_MODIFIED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__NOT_ENOUGH_ACCOUNT_KEYS]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_DATA_SIZE_CHANGED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_NOT_EXECUTABLE]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_BORROW_FAILED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_BORROW_OUTSTANDING]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__DUPLICATE_ACCOUNT_OUT_OF_SYNC]: 'internal_error',
  // Program-specific codes; see customErrorVerdict in errors.ts.
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM]: 'unclassified',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_ERROR]: 'unclassified',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXECUTABLE_DATA_MODIFIED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXECUTABLE_LAMPORT_CHANGE]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__EXECUTABLE_ACCOUNT_NOT_RENT_EXEMPT]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__UNSUPPORTED_PROGRAM_ID]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__CALL_DEPTH]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MISSING_ACCOUNT]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__REENTRANCY_NOT_ALLOWED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MAX_SEED_LENGTH_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_SEEDS]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_REALLOC]: 'internal_error',
  // Our compute-unit limit was too low for this transaction.
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__COMPUTATIONAL_BUDGET_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__PRIVILEGE_ESCALATION]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__PROGRAM_ENVIRONMENT_SETUP_FAILURE]: 'rpc_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__PROGRAM_FAILED_TO_COMPLETE]: 'unclassified',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__PROGRAM_FAILED_TO_COMPILE]: 'rpc_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__IMMUTABLE]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INCORRECT_AUTHORITY]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__BORSH_IO_ERROR]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ACCOUNT_NOT_RENT_EXEMPT]: 'internal_error',
  // The address where the recipient's token account belongs holds an account of another program.
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__INVALID_ACCOUNT_OWNER]: { createAta: 'invalid_destination' },
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ARITHMETIC_OVERFLOW]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__UNSUPPORTED_SYSVAR]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__ILLEGAL_OWNER]: { createAta: 'invalid_destination' },
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MAX_ACCOUNTS_DATA_ALLOCATIONS_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MAX_ACCOUNTS_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__MAX_INSTRUCTION_TRACE_LENGTH_EXCEEDED]: 'internal_error',
  [kit.SOLANA_ERROR__INSTRUCTION_ERROR__BUILTIN_PROGRAMS_MUST_CONSUME_COMPUTE_UNITS]: 'internal_error',
};

// Custom program error codes, per instruction role. The ATA instruction fails with the System program's codes when
// it cannot fund the new account, or the ATA program's own.
const SYSTEM_ERROR_ACCOUNT_ALREADY_IN_USE = 0; // also ATA InvalidOwner: either way the address is taken
const SYSTEM_ERROR_RESULT_WITH_NEGATIVE_LAMPORTS = 1;
const TOKEN_ERROR_INSUFFICIENT_FUNDS = 1;
const TOKEN_ERROR_MINT_MISMATCH = 3;
const TOKEN_ERROR_OWNER_MISMATCH = 4;
const TOKEN_ERROR_ACCOUNT_FROZEN = 17; // e.g. the issuer froze the recipient's account
const TOKEN_ERROR_MINT_DECIMALS_MISMATCH = 18;

export function customErrorVerdict(role: InstructionRole, code: number): Verdict {
  if (role === 'createAta') {
    if (code === SYSTEM_ERROR_RESULT_WITH_NEGATIVE_LAMPORTS) return 'insufficient_gas';
    if (code === SYSTEM_ERROR_ACCOUNT_ALREADY_IN_USE) return 'invalid_destination';
    return 'unclassified';
  }
  if (role === 'transfer') {
    switch (code) {
      case TOKEN_ERROR_INSUFFICIENT_FUNDS:
        return 'insufficient_funds';
      case TOKEN_ERROR_ACCOUNT_FROZEN:
        return 'invalid_destination';
      case TOKEN_ERROR_MINT_MISMATCH:
      case TOKEN_ERROR_OWNER_MISMATCH:
      case TOKEN_ERROR_MINT_DECIMALS_MISMATCH:
        return 'internal_error';
      default:
        return 'unclassified';
    }
  }
  return 'unclassified';
}
