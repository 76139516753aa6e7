// Regenerates proto/buf/validate/validate.proto from the file descriptor that
// @bufbuild/protovalidate ships, because the Buf Schema Registry is not
// reachable from our builds. The descriptor is printed back as proto source.
//
// Usage:
//   npm exec -- node scripts/vendor-validate-proto.ts          write the file
//   npm exec -- node scripts/vendor-validate-proto.ts --check  verify it
//
// --check fails (exit 1) if the vendored file is stale, or if compiling it with
// buf does not reproduce the shipped descriptor exactly.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clearField, clone, createRegistry, fromBinary, getExtension, isFieldSet, toBinary } from '@bufbuild/protobuf';
import type { DescExtension, DescField, Message } from '@bufbuild/protobuf';
import { protoCamelCase } from '@bufbuild/protobuf/reflect';
import { toText } from '@bufbuild/protobuf/txtpb';
import {
  Edition,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FieldDescriptorProtoSchema,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  file_google_protobuf_descriptor,
} from '@bufbuild/protobuf/wkt';
import type { DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { file_buf_validate_validate } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';

const SCRIPT = 'scripts/vendor-validate-proto.ts';
const PROTO_PATH = file_buf_validate_validate.proto.name; // "buf/validate/validate.proto"
const OUT_FILE = fileURLToPath(new URL(`../proto/${PROTO_PATH}`, import.meta.url));
const GEN_FILE = fileURLToPath(import.meta.resolve('@bufbuild/protovalidate/gen/buf/validate/validate_pb.js'));
const MAX_FIELD_NO = 536870911; // printed as "max" in extension and reserved ranges
const MAX_ENUM_NO = 2147483647;

// Resolves option message types and the custom options (extensions) declared by the file.
const registry = createRegistry(file_google_protobuf_descriptor, file_buf_validate_validate);
const file = file_buf_validate_validate.proto;
const syntax = file.syntax || 'proto2'; // descriptors leave syntax empty for proto2

/** Returns the version of the installed @bufbuild/protovalidate package (its package.json is not exported). */
function packageVersion(): string {
  for (let dir = dirname(GEN_FILE); dir !== dirname(dir); dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (!existsSync(pkg)) continue;
    const json = JSON.parse(readFileSync(pkg, 'utf8'));
    if (json.name === '@bufbuild/protovalidate') return json.version;
  }
  throw new Error('cannot locate the package.json of @bufbuild/protovalidate');
}

/** Returns the license notice at the top of the package's generated code, which carries the descriptor. */
function licenseNotice(): string[] {
  const lines = readFileSync(GEN_FILE, 'utf8').split('\n');
  const notice = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('//')),
  );
  if (!notice.some((l) => l.includes('Apache License')) || !notice.some((l) => l.includes('Buf Technologies'))) {
    throw new Error(`unexpected license notice in ${GEN_FILE}`);
  }
  return notice;
}

/** Quotes a string as a proto string literal; non-ASCII text stays UTF-8. */
function quote(s: string): string {
  const escapes: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  const escapeChar = (c: string) => escapes[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  return `"${s.replace(/[\\"\n\r\t\x00-\x1f\x7f]/g, escapeChar)}"`;
}

/** Quotes bytes as a proto string literal, octal-escaping everything but printable ASCII. */
function quoteBytes(bytes: Uint8Array): string {
  const printable = (b: number) => b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c;
  const escapeByte = (b: number) => (printable(b) ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, '0')}`);
  return `"${[...bytes].map(escapeByte).join('')}"`;
}

/**
 * Refers to a fully-qualified type name, relative to the file's package where possible.
 * Shadowing by a nested type of the same name would resolve differently; --check would catch that.
 */
function typeRef(fqn: string): string {
  const name = fqn.replace(/^\./, '');
  return file.package && name.startsWith(`${file.package}.`) ? name.slice(file.package.length + 1) : name;
}

/** Formats a single option value: scalars and enums inline, messages as a text-format `{ ... }` block. */
function formatValue(field: DescField | DescExtension, value: unknown): string {
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  if (kind === 'enum') return field.enum!.values.find((v) => v.number === value)?.name ?? String(value);
  if (kind === 'message') {
    const body = toText(field.message!, value as Message, { registry }).trimEnd();
    return body ? `{\n${body.replace(/^/gm, '  ')}\n}` : '{}';
  }
  if (typeof value === 'string') return quote(value);
  if (value instanceof Uint8Array) return quoteBytes(value);
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  }
  return String(value);
}

/**
 * Lists the options set on an options message as `name = value` strings, standard options first,
 * then custom options (extensions, read from the message's unknown fields) in their encoded order.
 * Repeated options yield one entry per element, like repeated `option` statements in source.
 */
function optionEntries(opts: Message | undefined): string[] {
  if (!opts) return [];
  const schema = registry.getMessage(opts.$typeName)!;
  const entries: string[] = [];
  const add = (field: DescField | DescExtension, name: string, value: unknown) => {
    for (const v of field.fieldKind === 'list' ? (value as unknown[]) : [value]) {
      entries.push(`${name} = ${formatValue(field, v)}`);
    }
  };
  for (const field of [...schema.fields].sort((a, b) => a.number - b.number)) {
    if (field.name === 'uninterpreted_option' || !isFieldSet(opts, field)) continue;
    if (field.fieldKind === 'map') throw new Error(`cannot print map option ${field.name}`);
    add(field, field.name, (opts as unknown as Record<string, unknown>)[field.localName]);
  }
  for (const no of new Set((opts.$unknown ?? []).map((u) => u.no))) {
    const ext = registry.getExtensionFor(schema, no);
    if (!ext) throw new Error(`unknown option field ${no} on ${schema.typeName}`);
    add(ext, `(${ext.typeName})`, getExtension(opts, ext));
  }
  return entries;
}

/** Renders `option ...;` statements for an element's options at the given indentation. */
function optionStatements(opts: Message | undefined, indent: string): string[] {
  return optionEntries(opts).map((e) => `${indent}option ${e.replaceAll('\n', `\n${indent}`)};`);
}

/** Renders the compact `[a = 1, (b) = {...}]` suffix for fields, enum values and ranges. */
function optionSuffix(entries: string[], indent: string): string {
  return entries.length ? ` [${entries.join(', ').replaceAll('\n', `\n${indent}`)}]` : '';
}

/** Renders `a to b` ranges; `inclusiveEnd` distinguishes enum ranges from message ranges. */
function range(start: number, end: number, inclusiveEnd: boolean, max: number): string {
  const last = inclusiveEnd ? end : end - 1;
  return last === start ? `${start}` : `${start} to ${last === max ? 'max' : last}`;
}

/** Renders `reserved` statements for ranges and names. */
function reserved(ranges: string[], names: string[], indent: string): string[] {
  const out = ranges.length ? [`${indent}reserved ${ranges.join(', ')};`] : [];
  const quoted = names.map((n) => (syntax === 'editions' ? n : quote(n)));
  return names.length ? [...out, `${indent}reserved ${quoted.join(', ')};`] : out;
}

/** Returns the label keyword (with trailing space) that the file's syntax requires for a field. */
function fieldLabel(f: FieldDescriptorProto): string {
  if (f.label === Label.REPEATED) return 'repeated ';
  if (syntax === 'proto2') return f.label === Label.REQUIRED ? 'required ' : 'optional ';
  return syntax === 'proto3' && f.proto3Optional ? 'optional ' : '';
}

/** Returns the type of a field as written in source: a scalar keyword or a (relative) type name. */
function fieldType(f: FieldDescriptorProto): string {
  if (f.type === Type.GROUP) throw new Error(`groups are not supported (${f.name})`);
  return f.type === Type.MESSAGE || f.type === Type.ENUM ? typeRef(f.typeName) : Type[f.type].toLowerCase();
}

/**
 * Renders a field or extension declaration, including label, type, pseudo-options and options.
 * Fields whose type is one of `mapEntries` print as `map<K, V>`; oneof members print without a label.
 */
function fieldDecl(f: FieldDescriptorProto, indent: string, mapEntries: Map<string, DescriptorProto>, inOneof: boolean): string {
  const mapEntry = f.type === Type.MESSAGE ? mapEntries.get(f.typeName) : undefined;
  const label = mapEntry || inOneof ? '' : fieldLabel(f);
  const type = mapEntry ? `map<${fieldType(mapEntry.field[0])}, ${fieldType(mapEntry.field[1])}>` : fieldType(f);
  const pseudo: string[] = [];
  if (isFieldSet(f, FieldDescriptorProtoSchema.field.defaultValue)) {
    const dv = f.defaultValue;
    pseudo.push(`default = ${f.type === Type.STRING ? quote(dv) : f.type === Type.BYTES ? `"${dv}"` : dv}`);
  }
  if (isFieldSet(f, FieldDescriptorProtoSchema.field.jsonName) && f.jsonName !== protoCamelCase(f.name)) {
    pseudo.push(`json_name = ${quote(f.jsonName)}`);
  }
  const suffix = optionSuffix([...pseudo, ...optionEntries(f.options)], indent);
  return `${indent}${label}${type} ${f.name} = ${f.number}${suffix};`;
}

/** Renders `extend` blocks, grouping consecutive extensions of the same extendee. */
function extendBlocks(exts: FieldDescriptorProto[], indent: string): string[] {
  const out: string[] = [];
  exts.forEach((ext, i) => {
    if (i === 0 || exts[i - 1].extendee !== ext.extendee) {
      if (i > 0) out.push(`${indent}}`, '');
      out.push(`${indent}extend ${typeRef(ext.extendee)} {`);
    }
    out.push(fieldDecl(ext, `${indent}  `, new Map(), false));
  });
  return exts.length ? [...out, `${indent}}`] : out;
}

/** Renders an enum with its options, values and reserved ranges/names. */
function enumBlock(e: EnumDescriptorProto, indent: string): string[] {
  const inner = `${indent}  `;
  return [
    `${indent}enum ${e.name} {`,
    ...optionStatements(e.options, inner),
    ...e.value.map((v) => `${inner}${v.name} = ${v.number}${optionSuffix(optionEntries(v.options), inner)};`),
    ...reserved(
      e.reservedRange.map((r) => range(r.start, r.end, true, MAX_ENUM_NO)),
      e.reservedName,
      inner,
    ),
    `${indent}}`,
  ];
}

/** Renders a message: options, fields (grouped into oneofs), nested types, extensions, ranges and reserved. */
function messageBlock(m: DescriptorProto, prefix: string, indent: string): string[] {
  const inner = `${indent}  `;
  const fqn = `${prefix}.${m.name}`;
  const entryTypes = m.nestedType.filter((n) => n.options?.mapEntry);
  const mapEntries = new Map(entryTypes.map((n) => [`${fqn}.${n.name}`, n]));
  const out = [`${indent}message ${m.name} {`, ...optionStatements(m.options, inner)];
  // Fields of a real oneof (proto3 `optional` uses a synthetic one) belong to its block.
  const oneofOf = (f: FieldDescriptorProto) => (isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex) && !f.proto3Optional ? f.oneofIndex : undefined);
  const printedOneofs = new Set<number>();
  for (const f of m.field) {
    const index = oneofOf(f);
    if (index === undefined) {
      out.push(fieldDecl(f, inner, mapEntries, false));
    } else if (!printedOneofs.has(index)) {
      // Oneof members are contiguous in descriptors, so print the whole oneof at its first member.
      printedOneofs.add(index);
      const oneof = m.oneofDecl[index];
      out.push(`${inner}oneof ${oneof.name} {`, ...optionStatements(oneof.options, `${inner}  `));
      for (const member of m.field.filter((g) => oneofOf(g) === index)) {
        out.push(fieldDecl(member, `${inner}  `, mapEntries, true));
      }
      out.push(`${inner}}`);
    }
  }
  for (const n of m.nestedType) if (!mapEntries.has(`${fqn}.${n.name}`)) out.push(...messageBlock(n, fqn, inner));
  for (const e of m.enumType) out.push(...enumBlock(e, inner));
  out.push(...extendBlocks(m.extension, inner));
  for (const r of m.extensionRange) {
    const suffix = optionSuffix(optionEntries(r.options), inner);
    out.push(`${inner}extensions ${range(r.start, r.end, false, MAX_FIELD_NO)}${suffix};`);
  }
  out.push(
    ...reserved(
      m.reservedRange.map((r) => range(r.start, r.end, false, MAX_FIELD_NO)),
      m.reservedName,
      inner,
    ),
  );
  return [...out, `${indent}}`];
}

/** Renders the complete proto source for the shipped descriptor. */
function render(): string {
  const header = [
    `// Code generated by ${SCRIPT} from the ${PROTO_PATH} descriptor`,
    `// shipped in @bufbuild/protovalidate ${packageVersion()}. DO NOT EDIT.`,
    `// Regenerate with: npm exec -- node ${SCRIPT}`,
    '//',
    '// Upstream license notice:',
    '//',
    ...licenseNotice(),
  ];
  const version = syntax === 'editions' ? `edition = "${Edition[file.edition].replace(/^EDITION_/, '')}";` : `syntax = "${syntax}";`;
  const imports = file.dependency.map((d, i) => {
    const kind = file.publicDependency.includes(i) ? 'public ' : file.weakDependency.includes(i) ? 'weak ' : '';
    return `import ${kind}${quote(d)};`;
  });
  const blocks = [
    ...file.messageType.map((m) => messageBlock(m, `.${file.package}`, '')),
    ...file.enumType.map((e) => enumBlock(e, '')),
    extendBlocks(file.extension, ''),
  ].filter((b) => b.length > 0);
  const pkg = file.package ? [`package ${file.package};`] : [];
  const sections = [header, [version], pkg, imports, optionStatements(file.options, ''), ...blocks];
  return `${sections
    .filter((s) => s.length > 0)
    .map((s) => s.join('\n'))
    .join('\n\n')}\n`;
}

/** Strips what the embedded descriptor omits (source info, default json_name), so both sides compare equal. */
function normalize(fdp: FileDescriptorProto): FileDescriptorProto {
  const copy = clone(FileDescriptorProtoSchema, fdp);
  clearField(copy, FileDescriptorProtoSchema.field.sourceCodeInfo);
  const strip = (fields: FieldDescriptorProto[]) => {
    for (const f of fields) {
      if (f.jsonName === protoCamelCase(f.name)) clearField(f, FieldDescriptorProtoSchema.field.jsonName);
    }
  };
  const walk = (m: DescriptorProto): void => {
    strip(m.field);
    strip(m.extension);
    m.nestedType.forEach(walk);
  };
  copy.messageType.forEach(walk);
  strip(copy.extension);
  return copy;
}

/** Returns a description of the first difference between two decoded messages, or undefined if equal. */
function firstDifference(want: unknown, got: unknown, path: string): string | undefined {
  if (want instanceof Uint8Array && got instanceof Uint8Array) {
    return want.length === got.length && want.every((b, i) => b === got[i]) ? undefined : `${path}: bytes differ`;
  }
  if (typeof want === 'object' && want !== null && typeof got === 'object' && got !== null) {
    const w = want as Record<string, unknown>;
    const g = got as Record<string, unknown>;
    for (const key of new Set([...Object.keys(w), ...Object.keys(g)])) {
      const name = (w[key] as { name?: unknown } | undefined)?.name; // label descriptor elements by name
      const diff = firstDifference(w[key], g[key], `${path}.${key}${typeof name === 'string' ? `(${name})` : ''}`);
      if (diff) return diff;
    }
    return undefined;
  }
  return Object.is(want, got) ? undefined : `${path}: shipped ${String(want)}, vendored ${String(got)}`;
}

/** Compiles the vendored file with buf in a scratch module and returns its FileDescriptorProto. */
function compileVendored(): FileDescriptorProto {
  const bufBin = createRequire(import.meta.url).resolve('@bufbuild/buf/bin/buf');
  const dir = mkdtempSync(join(tmpdir(), 'vendor-validate-proto-'));
  try {
    mkdirSync(join(dir, 'module', dirname(PROTO_PATH)), { recursive: true });
    writeFileSync(join(dir, 'module', 'buf.yaml'), 'version: v2\n');
    writeFileSync(join(dir, 'module', PROTO_PATH), readFileSync(OUT_FILE));
    const args = ['build', 'module', '--exclude-imports', '--exclude-source-info', '--as-file-descriptor-set'];
    execFileSync(process.execPath, [bufBin, ...args, '-o', 'out.binpb'], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, 'out.binpb')));
    const built = set.file.find((f) => f.name === PROTO_PATH);
    if (!built) throw new Error(`buf output has no ${PROTO_PATH}`);
    return built;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Verifies the vendored file is current and compiles to the shipped descriptor; returns an error or undefined. */
function check(): string | undefined {
  if (!existsSync(OUT_FILE) || readFileSync(OUT_FILE, 'utf8') !== render()) {
    return `${OUT_FILE} is missing or stale; run: npm exec -- node ${SCRIPT}`;
  }
  let built: FileDescriptorProto;
  try {
    built = compileVendored();
  } catch (err) {
    return `buf failed to compile ${OUT_FILE}: ${err instanceof Error ? err.message : String(err)}`;
  }
  const want = normalize(file);
  const got = normalize(built);
  const bytes = (fdp: FileDescriptorProto) => Buffer.from(toBinary(FileDescriptorProtoSchema, fdp));
  if (bytes(want).equals(bytes(got))) return undefined;
  return `descriptor mismatch at ${firstDifference(want, got, PROTO_PATH) ?? '(encoding differs)'}`;
}

if (process.argv.includes('--check')) {
  const problem = check();
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
  console.log(`${OUT_FILE} matches the descriptor shipped in @bufbuild/protovalidate ${packageVersion()}`);
} else {
  mkdirSync(dirname(OUT_FILE), { recursive: true });
  writeFileSync(OUT_FILE, render());
  console.log(`wrote ${OUT_FILE}`);
}
