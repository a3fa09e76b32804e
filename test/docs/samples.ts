// The code samples of README.md and docs/*.md, as modules a reader could paste: how they are found
// and put together. CONTRIBUTING.md ("Code samples in the docs") says how to write one.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** One fenced ```ts / ```js sample, ready to type-check as its own module. */
export interface Sample {
  /** `README.md:151`: the file and the line of the opening fence. */
  readonly name: string;
  readonly language: 'ts' | 'js';
  /** `file=pay-invoice.ts` in the fence line: the module's name, so a later sample can import it. */
  readonly file?: string;
  /** The module's text: the hidden context, the samples it continues, then its own code. */
  readonly text: string;
  /** Where each line of `text` comes from, for error messages (`README.md:160`). */
  readonly origins: readonly string[];
}

const LANGUAGES: Record<string, 'ts' | 'js'> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };
const FENCE = /^```(\w*)(.*)$/;
const CONTEXT_START = '<!-- sample-context';

/**
 * The samples of one Markdown file. A fence whose info string says `fragment` continues the sample
 * before it: it is compiled after that sample's text, in the same module. A comment
 * `<!-- sample-context … -->` right above a fence (hidden on GitHub and npm) holds declarations of
 * the application's own parts the sample uses (its records, its provider, its logger). A fence line
 * with `file=NAME.ts` names the module, and a later sample imports it as `./NAME.js`; a comment
 * `<!-- sample-context file=src/NAME.ts … -->` is a hidden module of its own that samples import.
 */
export function samplesOf(root: string, file: string): Sample[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const samples: Sample[] = [];
  let pendingContext: { text: string[]; origins: string[] } | undefined;
  let previous: Sample | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith(CONTEXT_START)) {
      const text: string[] = [];
      const origins: string[] = [];
      const start = i;
      const named = /^\s*file=(\S+)\s*$/.exec(line.slice(CONTEXT_START.length));
      if (!named && line.slice(CONTEXT_START.length).trim() !== '')
        throw new Error(`${file}:${i + 1}: write the context on the lines below the comment's start`);
      for (i++; i < lines.length && !(lines[i] ?? '').startsWith('-->'); i++) {
        text.push(lines[i] ?? '');
        origins.push(`${file}:${i + 1} (hidden context)`);
      }
      if (named?.[1]) {
        // A hidden module of its own, for samples that import it (`../src/operations/invoice-pay.js`).
        samples.push({
          name: `${file}:${start + 1}`,
          language: 'ts',
          file: named[1],
          text: text.join('\n'),
          origins,
        });
        pendingContext = undefined;
      } else pendingContext = { text, origins };
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (line.trim() !== '') pendingContext = undefined;
      continue;
    }
    const language = LANGUAGES[fence[1] ?? ''];
    const start = i;
    const code: string[] = [];
    const origins: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) {
      code.push(lines[i] ?? '');
      origins.push(`${file}:${i + 1}`);
    }
    if (!language) {
      pendingContext = undefined;
      continue;
    }
    const flags = (fence[2] ?? '').trim().split(/\s+/);
    const fragment = flags.includes('fragment');
    if (fragment && !previous) throw new Error(`${file}:${start + 1}: a fragment needs a sample before it`);
    const before =
      fragment && previous
        ? { text: [previous.text], origins: [...previous.origins] }
        : { text: [], origins: [] };
    const named = flags.find((f) => f.startsWith('file='))?.slice('file='.length);
    const sample: Sample = {
      name: `${file}:${start + 1}`,
      language,
      ...(named ? { file: named } : {}),
      text: [...before.text, ...(pendingContext?.text ?? []), ...code].join('\n'),
      origins: [...before.origins, ...(pendingContext?.origins ?? []), ...origins],
    };
    samples.push(sample);
    previous = sample;
    pendingContext = undefined;
  }
  return samples;
}

/** README.md and every Markdown file in docs/, relative to the repository root. */
export function documentsOf(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.sort().map((f) => `docs/${f}`)];
}

// Beside package.json, never written to disk: the compiler host serves them.
// A folder per document (`.samples/README-md/`): `file=` names are the document's own.
const pathOf = (root: string, sample: Sample) => {
  const [document = '', line = ''] = sample.name.split(':');
  const folder = join(root, '.samples', document.replace(/[/.]/g, '-'));
  return join(folder, sample.file ?? `sample-${line}.${sample.language}`);
};

function compilerOptions(root: string): ts.CompilerOptions {
  const configFile = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configFile, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configFile);
  return {
    ...parsed.options,
    noEmit: true,
    allowJs: true,
    checkJs: true,
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
}

/** The errors of each sample, as `README.md:160: message` lines. */
export function checkSamples(root: string, samples: readonly Sample[]): Map<Sample, string[]> {
  const files = new Map(samples.map((s) => [pathOf(root, s), s]));
  if (files.size !== samples.length) throw new Error('two samples of one document name the same file=');
  // `export {}` keeps a sample without imports a module, so samples never share a global scope.
  const textOf = (sample: Sample) => `${sample.text}\nexport {};\n`;
  const options = compilerOptions(root);
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile, directoryExists } = host;
  const folder = join(root, '.samples');
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.directoryExists = (d) => d.startsWith(folder) || (directoryExists?.call(host, d) ?? true);
  host.readFile = (f) => {
    const sample = files.get(f);
    return sample ? textOf(sample) : readFile.call(host, f);
  };
  host.getSourceFile = (f, language, onError, create) => {
    const sample = files.get(f);
    return sample
      ? ts.createSourceFile(f, textOf(sample), language, true)
      : getSourceFile.call(host, f, language, onError, create);
  };
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  const errors = new Map<Sample, string[]>(samples.map((s) => [s, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const sample = diagnostic.file ? files.get(diagnostic.file.fileName) : undefined;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!sample || !diagnostic.file || diagnostic.start === undefined) {
      // An error outside the samples (the options, a declaration file) belongs to every sample.
      for (const list of errors.values()) list.push(message);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    errors.get(sample)?.push(`${sample.origins[line] ?? `${sample.name} (appended)`}: ${message}`);
  }
  return errors;
}
