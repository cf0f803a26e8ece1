// JSON-RPC 2.0 error objects with the codes a Solana validator uses.
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
export const RPC_PREFLIGHT_FAILURE = -32002;
export const RPC_SIGNATURE_FAILURE = -32003;
export const RPC_BLOCK_NOT_AVAILABLE = -32004;
export const RPC_UNSUPPORTED_TX_VERSION = -32015;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
