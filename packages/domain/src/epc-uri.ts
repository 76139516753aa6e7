/**
 * The EPCs a captured EPCIS event may name a unit or a container by: a GS1 Digital Link URI
 * (`…/01/{gtin}/21/{serial}`, `…/00/{sscc}`, on any domain), the service's own `…/u/{token}` for a
 * unit without a GTIN, or an EPC pure identity URN (`urn:epc:id:sgtin:…`, `urn:epc:id:sscc:…`, as
 * the standard's examples use). Pure.
 */
import { gs1CheckDigit, isSscc, ssccOfUri } from './containers.ts';

/** A unit an EPC names: its serial, and its GTIN-14 when the EPC carries one. */
export interface EpcUnit {
  readonly gtin14: string | null;
  readonly serial: string;
}

/** The unit `epc` names, or null when it names none (a container, a lot, anything else). */
export function unitOfEpc(epc: string): EpcUnit | null {
  const urn = /^urn:epc:id:sgtin:(\d+)\.(\d+)\.(.+)$/.exec(epc);
  if (urn !== null) {
    const [, prefix, indicatorAndItem, serial] = urn as unknown as [string, string, string, string];
    if (prefix.length + indicatorAndItem.length !== 13) return null;
    const body = `${indicatorAndItem[0]}${prefix}${indicatorAndItem.slice(1)}`;
    return { gtin14: `${body}${gs1CheckDigit(body)}`, serial: safeDecode(serial) };
  }
  const link = /\/01\/(\d{8}|\d{12,14})\/21\/([^/?#]+)/.exec(epc);
  if (link !== null) return { gtin14: link[1]!.padStart(14, '0'), serial: safeDecode(link[2]!) };
  const own = /\/u\/([^/?#]+)$/.exec(epc);
  return own === null ? null : { gtin14: null, serial: safeDecode(own[1]!) };
}

/** The SSCC of the container `epc` names (a Digital Link `…/00/{sscc}` or `urn:epc:id:sscc:…`), or null. */
export function ssccOfEpc(epc: string): string | null {
  const urn = /^urn:epc:id:sscc:(\d+)\.(\d+)$/.exec(epc);
  if (urn === null) return ssccOfUri(epc);
  const [, prefix, extensionAndRef] = urn as unknown as [string, string, string];
  if (prefix.length + extensionAndRef.length !== 17) return null;
  const body = `${extensionAndRef[0]}${prefix}${extensionAndRef.slice(1)}`;
  const sscc = `${body}${gs1CheckDigit(body)}`;
  return isSscc(sscc) ? sscc : null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
