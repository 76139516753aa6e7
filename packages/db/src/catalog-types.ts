/** One rejected row of a product CSV import. */
export interface ProductImportRowError {
  /** 1-based data row number. */
  readonly row: number;
  /** Column at fault, when one is. */
  readonly field: string | null;
  /** What is wrong. */
  readonly message: string;
}
