// The parlay program's Anchor IDL (parlay_program.json beside this file, the contract of
// docs/contracts/service.md) and its Borsh coder.
import { BorshCoder, type Idl } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const idl = require('./parlay_program.json') as Idl;
export const PARLAY_PROGRAM_ID = new PublicKey(idl.address);
export const coder = new BorshCoder(idl);
