// Transaction and instruction errors in the JSON shape a validator's RPC answers, conversion from
// LiteSVM's error objects, and the Display strings the validator writes in logs and messages.

export type InstructionErrorJson = string | { Custom: number } | { BorshIoError: string };
export type TransactionErrorJson =
  | string
  | { InstructionError: [number, InstructionErrorJson] }
  | { DuplicateInstruction: number }
  | { InsufficientFundsForRent: { account_index: number } }
  | { ProgramExecutionTemporarilyRestricted: { account_index: number } };

// Index = LiteSVM's numeric enum value (same order as the Rust enums).
const TX_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
];

const IX_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
];

function instructionErrorFromSvm(e: unknown): InstructionErrorJson {
  if (typeof e === 'number') return IX_ERRORS[e] ?? 'GenericError';
  const o = e as { code?: number; msg?: string };
  if (typeof o.code === 'number') return { Custom: o.code };
  if (typeof o.msg === 'string') return { BorshIoError: o.msg };
  return 'GenericError';
}

/** Converts the error of a LiteSVM FailedTransactionMetadata to the RPC's JSON shape. */
export function transactionErrorFromSvm(e: unknown): TransactionErrorJson {
  if (typeof e === 'number') return TX_ERRORS[e] ?? 'SanitizeFailure';
  const o = e as { index?: number; accountIndex?: number; err?: () => unknown; constructor?: { name?: string } };
  if (typeof o.err === 'function' && typeof o.index === 'number') return { InstructionError: [o.index, instructionErrorFromSvm(o.err())] };
  if (typeof o.index === 'number') return { DuplicateInstruction: o.index };
  if (typeof o.accountIndex === 'number') {
    return o.constructor?.name?.includes('Restricted')
      ? { ProgramExecutionTemporarilyRestricted: { account_index: o.accountIndex } }
      : { InsufficientFundsForRent: { account_index: o.accountIndex } };
  }
  return 'SanitizeFailure';
}

const IX_DISPLAY: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  ReadonlyDataModified: 'instruction modified data of a read-only account',
  ReadonlyLamportChange: 'instruction changed the balance of a read-only account',
  ExternalAccountDataModified: 'instruction modified data of an account it does not own',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  AccountNotExecutable: 'instruction expected an executable account',
  InvalidSeeds: 'Provided seeds do not result in a valid address',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  PrivilegeEscalation: 'Cross-program invocation with unauthorized signer or writable account',
  ProgramFailedToComplete: 'Program failed to complete',
  ArithmeticOverflow: 'Program arithmetic overflowed',
  IllegalOwner: 'Provided owner is not allowed',
  InvalidAccountOwner: 'Invalid account owner',
  AccountNotRentExempt: 'An account does not have enough lamports to be rent-exempt',
  UnsupportedProgramId: 'Unsupported program id',
};

export function displayInstructionError(e: InstructionErrorJson): string {
  if (typeof e === 'string') return IX_DISPLAY[e] ?? e;
  if ('Custom' in e) return `custom program error: 0x${e.Custom.toString(16)}`;
  return `Failed to serialize or deserialize account data: ${e.BorshIoError}`;
}

const TX_DISPLAY: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  MissingSignatureForFee: 'Transaction requires a fee but has no signature present',
  InvalidAccountIndex: 'Transaction contains an invalid account reference',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  UnsupportedVersion: 'Transaction version is unsupported',
};

export function displayTransactionError(e: TransactionErrorJson): string {
  if (typeof e === 'string') return TX_DISPLAY[e] ?? e;
  if ('InstructionError' in e)
    return `Error processing Instruction ${e.InstructionError[0]}: ${displayInstructionError(e.InstructionError[1])}`;
  if ('DuplicateInstruction' in e) return `Transaction contains a duplicate instruction (${e.DuplicateInstruction}) that is not allowed`;
  if ('InsufficientFundsForRent' in e)
    return `Transaction results in an account (${e.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  return JSON.stringify(e);
}
