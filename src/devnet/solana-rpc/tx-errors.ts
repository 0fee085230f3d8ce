// LiteSVM's transaction errors rewritten in the JSON shape the real RPC uses ("BlockhashNotFound",
// {"InstructionError":[1,{"Custom":1}]}, {"InsufficientFundsForRent":{"account_index":0}}), plus the human
// message agave prints for the common ones, so that clients and kit's error decoding see what a validator would send.
import type { FailedTransactionMetadata } from 'litesvm';
import {
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
} from 'litesvm/dist/internal.js';

export type RpcTransactionError = string | Readonly<Record<string, unknown>>;

// LiteSVM's numbering of its fieldless enums (litesvm/dist/internal.d.ts), by position.
const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const;

const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner',
  'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const;

export function rpcTransactionError(failed: FailedTransactionMetadata): RpcTransactionError {
  const err = failed.err();
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `UnknownTransactionError${err}`;
  if (err instanceof TransactionErrorInstructionError) {
    const inner = err.err();
    let instructionError: RpcTransactionError;
    if (typeof inner === 'number') instructionError = INSTRUCTION_ERRORS[inner] ?? `UnknownInstructionError${inner}`;
    else if (inner instanceof InstructionErrorCustom) instructionError = { Custom: inner.code };
    else if (inner instanceof InstructionErrorBorshIo) instructionError = 'BorshIoError';
    else instructionError = 'GenericError';
    return { InstructionError: [err.index, instructionError] };
  }
  if (err instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: err.index };
  if (err instanceof TransactionErrorInsufficientFundsForRent) {
    return { InsufficientFundsForRent: { account_index: err.accountIndex } };
  }
  if (err instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: err.accountIndex } };
  }
  return 'SanitizeFailure';
}

/** agave's Display text of a transaction error, as it appears after "Transaction simulation failed: ". */
export function describeTransactionError(error: RpcTransactionError): string {
  if (typeof error === 'string') {
    switch (error) {
      case 'BlockhashNotFound':
        return 'Blockhash not found';
      case 'AlreadyProcessed':
        return 'This transaction has already been processed';
      case 'InsufficientFundsForFee':
        return 'Insufficient funds for fee';
      case 'AccountNotFound':
        return 'Attempt to debit an account but found no record of a prior credit.';
      default:
        return error;
    }
  }
  const instruction = error.InstructionError;
  if (Array.isArray(instruction)) {
    const [index, inner] = instruction as [number, RpcTransactionError];
    return `Error processing Instruction ${index}: ${describeInstructionError(inner)}`;
  }
  const rent = error.InsufficientFundsForRent as { account_index?: number } | undefined;
  if (rent) return `Transaction results in an account (${rent.account_index}) with insufficient funds for rent`;
  return Object.keys(error)[0] ?? 'Unknown transaction error';
}

function describeInstructionError(error: RpcTransactionError): string {
  if (typeof error === 'string') {
    if (error === 'InsufficientFunds') return 'insufficient funds for instruction';
    return error;
  }
  if (typeof error.Custom === 'number') return `custom program error: 0x${error.Custom.toString(16)}`;
  return Object.keys(error)[0] ?? 'unknown instruction error';
}
