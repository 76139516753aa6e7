// Reading what an operator typed and what the API answered, for the passport and serial screens.

/** The section an API field error belongs to (`content.materials[0].massFraction` is materials'), '' for the whole content. */
export function sectionOf(field: string): string {
  const m = /^content\.(access\.)?([A-Za-z0-9_]+)/.exec(field);
  return m === null ? '' : m[2]!;
}

/** The `field: message` parts of a passport refusal (its fields are camelCase paths under `content`). */
export function passportFieldErrors(text: string): { field: string; message: string }[] {
  return text.split('; ').flatMap((part) => {
    const m = /^(content(?:\.[A-Za-z0-9_]+|\[\d+\])*): (.+)$/s.exec(part);
    return m === null ? [] : [{ field: m[1]!, message: m[2]! }];
  });
}

/** The serials of a pasted list: one per line, or separated by commas, semicolons or spaces. */
export function parseSerials(text: string): string[] {
  return text.split(/[\s,;]+/).map((s) => s.trim()).filter((s) => s !== '');
}

/** One section's change between two passport versions: added, removed or changed, with its JSON before and after. */
export interface SectionChange {
  readonly section: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly before?: string;
  readonly after?: string;
}

/** The sections that differ between two versions' content (the `access` map compared as a section of its own), in the newer one's order. */
export function sectionChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): SectionChange[] {
  const names = [...Object.keys(after), ...Object.keys(before).filter((k) => !(k in after))];
  return names.flatMap((section): SectionChange[] => {
    const was = before[section] === undefined ? undefined : JSON.stringify(before[section], null, 2);
    const is = after[section] === undefined ? undefined : JSON.stringify(after[section], null, 2);
    if (was === is) return [];
    if (was === undefined) return [{ section, change: 'added', after: is! }];
    if (is === undefined) return [{ section, change: 'removed', before: was }];
    return [{ section, change: 'changed', before: was, after: is }];
  });
}
