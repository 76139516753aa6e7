// Types of the part of GS1's digital-link.js (CommonJS, untyped) the resolver uses.
declare module 'digital-link.js' {
  const digitalLink: {
    readonly Utils: {
      /** Decompresses a compressed GS1 Digital Link URI into the uncompressed one; throws when it is not one. */
      decompressWebUri(uri: string, useShortText?: boolean): string;
      /** Compresses a GS1 Digital Link URI (tests use it to make compressed requests). */
      compressWebUri(uri: string, useOptimisations?: boolean, compressOtherKeyValuePairs?: boolean): string;
    };
    /** Parses a GS1 Digital Link URI (the path before the primary key is its stem); tests check the URIs they request with it. */
    DigitalLink(uri: string): { isValid(): boolean; getIdentifier(): Record<string, string> };
  };
  export default digitalLink;
}
