// Products: the brand's catalogue (paged, each product linking to its passport) and the CSV
// import, with each refused row's error.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { CatalogService, CommercialStatus, MintReadinessStatus, ProductImportStatus } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { enumName, ErrorMessage, ImportRows, Pager, useCursorPages } from '../ui.tsx';

/** The values of a contract enum as the table shows them and the import reads them (`draft, active, ...`), UNSPECIFIED left out. */
function valuesOf(values: Record<string, string | number>): string {
  return Object.keys(values)
    .filter((name) => Number.isNaN(Number(name)) && name !== 'UNSPECIFIED')
    .map((name) => name.toLowerCase())
    .join(', ');
}

/** Follows an import until it finished, then shows its counts and row errors. */
function ImportResult({ importId }: { readonly importId: string }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const result = useQuery(
    CatalogService.method.getProductImport,
    { brandId, importId },
    {
      refetchInterval: (q) => {
        const status = q.state.data?.import?.status;
        if (status === ProductImportStatus.COMPLETED || status === ProductImportStatus.FAILED) {
          void queryClient.invalidateQueries({ predicate: (query) => JSON.stringify(query.queryKey).includes('ListProducts') });
          return false;
        }
        return 500;
      },
    },
  );
  const imp = result.data?.import;
  return (
    <section aria-labelledby="import-title" className="import-result">
      <h2 id="import-title">Import {importId.slice(0, 8)}</h2>
      <ErrorMessage error={result.error} />
      {imp !== undefined && <ImportRows imp={imp} testId="import-status" />}
    </section>
  );
}

/** The Products screen. */
export function Products(): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const list = useQuery(CatalogService.method.listProducts, { brandId, limit: 50, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  const start = useMutation(CatalogService.method.startProductImport);
  const [file, setFile] = useState<File | null>(null);
  const [importId, setImportId] = useState<string | undefined>(undefined);
  const onImport = async (event: FormEvent) => {
    event.preventDefault();
    if (file === null) return;
    const answer = await start.mutateAsync({ brandId, csv: new Uint8Array(await file.arrayBuffer()) }).catch(() => undefined);
    if (answer?.import !== undefined) setImportId(answer.import.id);
  };
  return (
    <>
      <h1>Products</h1>
      <form className="inline-form" onSubmit={(e) => void onImport(e)} aria-label="Product CSV import">
        <label htmlFor="csv">CSV file (sku, name, gtin, commercial_status, mint_readiness_status, passport_url)</label>
        <p className="hint" id="csv-hint">
          commercial_status: {valuesOf(CommercialStatus)}; mint_readiness_status: {valuesOf(MintReadinessStatus)}; in any case.
        </p>
        <input id="csv" type="file" accept=".csv,text/csv" aria-describedby="csv-hint" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        <button type="submit" disabled={start.isPending || file === null}>
          Import products
        </button>
      </form>
      <ErrorMessage error={start.error} />
      {importId !== undefined && <ImportResult key={importId} importId={importId} />}
      <ErrorMessage error={list.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>SKU</th>
              <th>Name</th>
              <th>GTIN</th>
              <th>Commercial status</th>
              <th>Mint readiness</th>
              <th>Passport</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.products ?? []).map((p) => (
              <tr key={p.id}>
                <td>{p.sku}</td>
                <td>{p.name}</td>
                <td>{p.gtin ?? ''}</td>
                <td>{enumName(CommercialStatus, p.commercialStatus)}</td>
                <td>{enumName(MintReadinessStatus, p.mintReadinessStatus)}</td>
                <td>
                  <a href={`#/products/${encodeURIComponent(p.id)}/passport`}>Passport</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        label="Products"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}
