// The sizes every size figure of the project uses: raw bytes, gzip at level 9
// and brotli at quality 11 (js/build/size.mjs, the bundler matrix).
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** `{ raw, gzip, brotli }` bytes of `data`. */
export function compressedSizes(data) {
  return {
    raw: data.length,
    gzip: gzipSync(data, { level: 9 }).length,
    brotli: brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }).length,
  };
}
