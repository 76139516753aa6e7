// Links: the resolver links of a product (GTIN), one of its lots or one unit (serial).

import { useQuery } from '@connectrpc/connect-query';
import { skipToken } from '@connectrpc/connect-query';
import { LinkLevel, ResolverService } from '@mint/contract';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage } from '../ui.tsx';

interface Target { readonly level: LinkLevel; readonly gtin: string; readonly lot: string; readonly serial: string }

/** The Links screen. */
export function Links(): ReactNode {
  const brandId = useBrand();
  const [level, setLevel] = useState<LinkLevel>(LinkLevel.GTIN);
  const [gtin, setGtin] = useState('');
  const [lot, setLot] = useState('');
  const [serial, setSerial] = useState('');
  const [target, setTarget] = useState<Target | undefined>(undefined);
  const links = useQuery(ResolverService.method.listLinks, target === undefined ? skipToken : { brandId, level: target.level, gtin: target.gtin, limit: 100 });
  // ListLinks selects a level and GTIN; a lot's or unit's links are those naming it.
  const shown = (links.data?.links ?? []).filter((l) => (target?.level === LinkLevel.LOT ? l.lot === target.lot : target?.level === LinkLevel.SERIAL ? l.serial === target.serial : true));
  const onShow = (event: FormEvent) => {
    event.preventDefault();
    setTarget({ level, gtin: gtin.trim(), lot: lot.trim(), serial: serial.trim() });
  };
  return (
    <>
      <h1>Links</h1>
      <form className="inline-form" onSubmit={onShow} aria-label="Find links">
        <label htmlFor="link-level">Of</label>
        <select id="link-level" value={level} onChange={(e) => setLevel(Number(e.target.value) as LinkLevel)}>
          <option value={LinkLevel.GTIN}>a product (GTIN)</option>
          <option value={LinkLevel.LOT}>a lot</option>
          <option value={LinkLevel.SERIAL}>a unit (serial)</option>
        </select>
        <label htmlFor="link-gtin">GTIN</label>
        <input id="link-gtin" required value={gtin} onChange={(e) => setGtin(e.target.value)} inputMode="numeric" />
        {level === LinkLevel.LOT && <><label htmlFor="link-lot">Lot</label><input id="link-lot" required value={lot} onChange={(e) => setLot(e.target.value)} /></>}
        {level === LinkLevel.SERIAL && <><label htmlFor="link-serial">Serial</label><input id="link-serial" required value={serial} onChange={(e) => setSerial(e.target.value)} /></>}
        <button type="submit">Show links</button>
      </form>
      <ErrorMessage error={links.error} />
      {target !== undefined && links.data !== undefined && (shown.length === 0 ? <p>No links: the resolver answers with its defaults.</p> : (
        <div className="table-wrap">
          <table>
            <thead><tr><th>Link type</th><th>Title</th><th>Target</th><th>Default</th></tr></thead>
            <tbody>{shown.map((l) => <tr key={l.id}><td><code>{l.linkType}</code></td><td>{l.title}</td><td className="url">{l.href}</td><td>{l.isDefault ? 'yes' : ''}</td></tr>)}</tbody>
          </table>
        </div>
      ))}
    </>
  );
}
