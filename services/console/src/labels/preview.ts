// A label drawn in the browser before a pack is asked for: the unit's barcode (a GS1 Digital Link
// QR code or a GS1 DataMatrix, encoded by bwip-js as the API's label renderer does) and its
// human-readable lines, on a label of the layout's size. bwip-js is loaded on first use, so the
// console's first load does not carry it.

/** What one label shows. */
export interface PreviewUnit {
  readonly gtin: string;
  readonly serial: string;
  /** The unit's GS1 Digital Link URI (its resolver URL). */
  readonly digitalLink: string;
}

/** `(01) 09506000134352`, `(21) ABC`: the lines printed under the symbol. */
export function hriLines(unit: PreviewUnit): string[] {
  return [`(01) ${unit.gtin}`, `(21) ${unit.serial}`];
}

/**
 * The barcode of `unit` as an SVG document (a string), QR carrying the Digital Link or DataMatrix
 * carrying (01)(21); rejects with the encoder's message when the unit cannot be encoded.
 */
export async function symbolSvg(unit: PreviewUnit, symbology: 'qr' | 'datamatrix'): Promise<string> {
  // The generic entry exports each symbology on its own, so the chunk holds only these two encoders.
  const bwip = await import('bwip-js/generic');
  return symbology === 'qr'
    ? bwip.gs1dlqrcode({ bcid: 'gs1dlqrcode', text: unit.digitalLink, scale: 2 }, bwip.drawingSVG())
    : bwip.gs1datamatrix(
        { bcid: 'gs1datamatrix', text: `(01)${unit.gtin}(21)${unit.serial.replaceAll('(', '^040')}`, parse: true, scale: 2 } as Parameters<
          typeof bwip.gs1datamatrix
        >[0],
        bwip.drawingSVG(),
      );
}
