/**
 * A printable report as PDF (the batch's document of serialisation): a title, lines of facts and
 * tables of text, on A4 pages with page numbers, in the standard Helvetica font. The same pdfkit
 * that writes the label sheets; text stays text, so a reader can extract it.
 */

import PDFDocument from 'pdfkit';

/** One table of a report: its heading, column titles and rows of cells. */
export interface ReportTable {
  readonly heading: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

/** What a report holds. */
export interface ReportDocument {
  readonly title: string;
  /** Lines under the title (what the report is about, when it was made). */
  readonly facts: readonly string[];
  readonly tables: readonly ReportTable[];
  /** A closing line (the verdict). */
  readonly conclusion: string;
  /** The document's creation time, written in its metadata. */
  readonly createdAt: Date;
}

/** A4 in points, and the margin. */
const page = { width: 595.28, height: 841.89, margin: 50 };
const rowHeight = 16;

/** Renders `report` as a PDF and returns its bytes. */
export function reportPdf(report: ReportDocument): Promise<Uint8Array> {
  const doc = new PDFDocument({
    size: [page.width, page.height],
    margin: page.margin,
    compress: true,
    bufferPages: true,
    info: { Title: report.title, Producer: 'mint reports', Creator: 'mint reports', CreationDate: report.createdAt },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Uint8Array>((resolve, reject) => {
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    doc.on('error', reject);
  });
  const bottom = page.height - page.margin - rowHeight;
  doc.font('Helvetica-Bold').fontSize(16).text(report.title, page.margin, page.margin);
  doc.moveDown(0.5).font('Helvetica').fontSize(10);
  for (const fact of report.facts) doc.text(fact);
  for (const table of report.tables) {
    doc.moveDown(1);
    if (doc.y > bottom - 2 * rowHeight) doc.addPage();
    doc.font('Helvetica-Bold').fontSize(12).text(table.heading, page.margin, doc.y);
    doc.moveDown(0.3);
    const width = (page.width - 2 * page.margin) / table.columns.length;
    const row = (cells: readonly (string | number)[], bold: boolean) => {
      if (doc.y > bottom) doc.addPage();
      const y = doc.y;
      doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9);
      cells.forEach((cell, i) => {
        doc.text(String(cell), page.margin + i * width, y, { width: width - 4, lineBreak: false, ellipsis: true });
      });
      doc.y = y + rowHeight;
    };
    row(table.columns, true);
    for (const cells of table.rows) row(cells, false);
  }
  doc.moveDown(1);
  if (doc.y > bottom) doc.addPage();
  doc.font('Helvetica-Bold').fontSize(11).text(report.conclusion, page.margin, doc.y);
  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    // The footer sits in the bottom margin: without this, pdfkit would start a new page for it.
    doc.page.margins.bottom = 0;
    doc
      .font('Helvetica')
      .fontSize(8)
      .text(`page ${i + 1} of ${range.count}`, page.margin, page.height - page.margin / 2 - 8, { lineBreak: false });
  }
  doc.end();
  return done;
}
