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
