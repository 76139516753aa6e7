// The passport page's style (#/passport-style): the logo (an https URL) and colour (#rrggbb) the
// brand's hosted passport pages show beside its name, set with SetPassportStyle (owner only; empty
// values remove them). The form starts from the style last set (the newest `passport_style_set`
// event of the audit log, the API having no read of the style), and a small preview shows the
// page's header as it will look. The API's refusals are shown at the field they name.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { AccountService, MintService, PassportService } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { errorText } from '../api.ts';
import { useBrand } from '../context.tsx';
import { ErrorMessage, fieldErrors, formatTime } from '../ui.tsx';

/** The host a logo URL names, or '' when it is not a URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The passport style screen. */
export function PassportStyle(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const memberships = useQuery(AccountService.method.listMyMemberships, {});
  const brandName = memberships.data?.memberships.find((m) => m.brandId === brandId)?.brandName ?? 'Your brand';
  const last = useQuery(MintService.method.listMintEvents, { brandId, eventType: 'passport_style_set', limit: 1 });
  const set = useMutation(PassportService.method.setPassportStyle);
  const [logoUrl, setLogoUrl] = useState<string | undefined>(undefined);
  const [colour, setColour] = useState<string | undefined>(undefined);
  const lastEvent = last.data?.events[0];
  // The form starts from the style last set, once the audit log answered.
  useEffect(() => {
    if (last.data === undefined || logoUrl !== undefined) return;
    const payload = (lastEvent?.payload ?? {}) as { logo_url?: string | null; colour?: string | null };
    setLogoUrl(payload.logo_url ?? '');
    setColour(payload.colour ?? '');
  }, [last.data, lastEvent, logoUrl]);
  const errors = set.error === null ? [] : fieldErrors(errorText(set.error));
  const at = (field: string) => errors.filter((e) => e.field === field);
  const general = set.error !== null && errors.every((e) => e.field !== 'logo_url' && e.field !== 'colour') ? set.error : null;
  const onSave = (event: FormEvent) => {
    event.preventDefault();
    set.mutate(
      { brandId, logoUrl: (logoUrl ?? '').trim(), colour: (colour ?? '').trim() },
      {
        onSuccess: () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListMintEvents') }),
      },
    );
  };
  const shownColour = /^#[0-9a-fA-F]{6}$/.test(colour ?? '') ? colour! : undefined;
  const logoHost = hostOf(logoUrl ?? '');
  return (
    <>
      <h1>Passport page style</h1>
      <p className="hint">
        The brand&apos;s name heads every hosted passport page; a logo is shown before it and a bar in the brand&apos;s colour above it. The name is the
        workspace&apos;s: <strong>{brandName}</strong>.
      </p>
      {logoUrl !== undefined && (
        <form className="grid-form" onSubmit={onSave} aria-labelledby="style-title" noValidate>
          <h2 id="style-title">Logo and colour</h2>
          <label htmlFor="style-logo">Logo URL (https)</label>
          <input
            id="style-logo"
            type="url"
            inputMode="url"
            placeholder="https://brand.example/logo.png"
            value={logoUrl}
            aria-invalid={at('logo_url').length > 0}
            aria-describedby={at('logo_url').length > 0 ? 'style-logo-errors' : 'style-logo-hint'}
            onChange={(e) => setLogoUrl(e.target.value)}
          />
          <p className="hint" id="style-logo-hint">
            Shown at 40 by 40 pixels. Leave empty for no logo.
          </p>
          {at('logo_url').length > 0 && (
            <p className="error" role="alert" id="style-logo-errors" data-field="logo_url">
              <code>logo_url</code>: {at('logo_url')[0]!.message}
            </p>
          )}
          <label htmlFor="style-colour">Colour (#rrggbb)</label>
          <div className="colour-input">
            <input
              id="style-colour"
              value={colour}
              placeholder="#0b5cad"
              maxLength={7}
              aria-invalid={at('colour').length > 0}
              aria-describedby={at('colour').length > 0 ? 'style-colour-errors' : undefined}
              onChange={(e) => setColour(e.target.value)}
            />
            <input type="color" aria-label="Pick the colour" value={shownColour ?? '#000000'} onChange={(e) => setColour(e.target.value)} />
          </div>
          {at('colour').length > 0 && (
            <p className="error" role="alert" id="style-colour-errors" data-field="colour">
              <code>colour</code>: {at('colour')[0]!.message}
            </p>
          )}
          <div className="actions">
            <button type="submit" disabled={set.isPending}>
              Save style
            </button>
          </div>
          <ErrorMessage error={general} />
          {set.data !== undefined && set.error === null && (
            <p role="status" data-testid="style-saved">
              Style saved: {set.data.logoUrl === '' ? 'no logo' : `logo ${set.data.logoUrl}`},{' '}
              {set.data.colour === '' ? 'the default colour' : `colour ${set.data.colour}`}.
            </p>
          )}
        </form>
      )}
      <ErrorMessage error={last.error ?? memberships.error} />
      {lastEvent !== undefined && <p className="hint">Last set {formatTime(lastEvent.occurredAt)} UTC.</p>}
      <section aria-labelledby="style-preview-title">
        <h2 id="style-preview-title">Preview</h2>
        <div className="style-preview" data-testid="style-preview">
          <div
            className="style-preview-header"
            style={shownColour === undefined ? {} : { borderTop: `6px solid ${shownColour}`, paddingTop: '0.5rem' }}
            data-colour={shownColour ?? ''}
          >
            {logoHost !== '' && (
              <span className="style-preview-logo" title={logoUrl}>
                logo<span className="visually-hidden"> from {logoHost}</span>
              </span>
            )}
            <span>{brandName}</span>
          </div>
          <p className="hint">The passport page loads the logo itself; the console shows where it goes{logoHost === '' ? '' : ` (from ${logoHost})`}.</p>
        </div>
      </section>
    </>
  );
}
