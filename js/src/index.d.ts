/** An RFC 4122 version 4 UUID (lowercase) from `crypto.getRandomValues`. */
export declare function newId(): string;
/**
 * The LLM-facing name of a tool: `.` becomes `__`; a result longer than 64
 * characters keeps its first 55, then `_` and 8 hex digits of the FNV-1a hash
 * of the full name.
 */
export declare function llmName(name: string): string;
