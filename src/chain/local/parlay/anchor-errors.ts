// Errors of the emulated program as Anchor reports them: the program's own (6000+, from the IDL)
// and the framework's constraint/account errors, with the log line Anchor writes.
import { idl } from '../../idl.ts';
import type { InstructionErrorJson } from '../tx-errors.ts';

const FRAMEWORK: Record<string, [number, string]> = {
  InstructionMissing: [100, '8 byte instruction identifier not provided'],
  InstructionFallbackNotFound: [101, 'Fallback functions are not supported'],
  InstructionDidNotDeserialize: [102, 'The program could not deserialize the given instruction'],
  ConstraintMut: [2000, 'A mut constraint was violated'],
  ConstraintRaw: [2003, 'A raw constraint was violated'],
  ConstraintSeeds: [2006, 'A seeds constraint was violated'],
  ConstraintAddress: [2012, 'An address constraint was violated'],
  ConstraintTokenMint: [2014, 'A token mint constraint was violated'],
  ConstraintTokenOwner: [2015, 'A token owner constraint was violated'],
  AccountDiscriminatorMismatch: [3002, '8 byte discriminator did not match what was expected'],
  AccountDidNotDeserialize: [3003, 'Failed to deserialize the account'],
  AccountNotEnoughKeys: [3005, 'Not enough account keys given to the instruction'],
  AccountOwnedByWrongProgram: [3007, 'The given account is owned by a different program than expected'],
  InvalidProgramId: [3008, 'Program ID was not as expected'],
  AccountNotSigner: [3010, 'The given account did not sign'],
  AccountNotInitialized: [3012, 'The program expected this account to be already initialized'],
};

export type ProgramErrorName =
  | 'ExposureLimitExceeded'
  | 'TooManyLegs'
  | 'TooFewLegs'
  | 'DuplicateMarket'
  | 'StakeBelowMinimum'
  | 'StakeAboveMaximum'
  | 'PayoutCapExceeded'
  | 'VaultPaused'
  | 'InvalidProbability'
  | 'ParlayNotActive'
  | 'ParlayNotClaimable'
  | 'LegAlreadySettled'
  | 'Unauthorized';
export type FrameworkErrorName = keyof typeof FRAMEWORK;

/** An instruction of the emulated program failed; `logs` are written before the failed line. */
export class ProgramFailure extends Error {
  constructor(
    readonly err: InstructionErrorJson,
    readonly logs: string[] = [],
  ) {
    super(typeof err === 'string' ? err : JSON.stringify(err));
  }
}

/** The compute meter ran out. */
export class ComputeExhausted extends Error {}

export function errorCode(name: ProgramErrorName | FrameworkErrorName): number {
  const own = idl.errors?.find((e) => e.name === name);
  if (own) return own.code;
  return FRAMEWORK[name][0];
}

/** The AnchorError a program's `err!`/`require!` (or a constraint on `account`) produces. */
export function anchorError(name: ProgramErrorName | FrameworkErrorName, account?: string): ProgramFailure {
  const own = idl.errors?.find((e) => e.name === name);
  const [code, message] = own ? [own.code, own.msg ?? name] : FRAMEWORK[name];
  const where = account ? `AnchorError caused by account: ${account}.` : 'AnchorError occurred.';
  return new ProgramFailure({ Custom: code }, [
    `Program log: ${where} Error Code: ${name}. Error Number: ${code}. Error Message: ${message}.`,
  ]);
}
