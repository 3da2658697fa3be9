/**
 * Command-line parsing, pure: `flotilla [global flags] GROUP VERB [args] [flags]`. The command is
 * found from the first two words, then node's `util.parseArgs` checks the flags strictly against
 * the global flags plus that command's own. Anything wrong is a usage error (exit code 2).
 */
import { parseArgs } from 'node:util';
import { usageError } from './errors.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Placeholder in the help text, e.g. FILE. */
  value?: string;
  description: string;
}

export type OptionSpecs = Record<string, OptionSpec>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandSpec<Ctx> {
  group: string;
  verb: string;
  /** Positional arguments, e.g. ['NAME']; a name ending in `...` takes one or more. None when absent. */
  args?: string[];
  summary: string;
  /** More text for the command's own help, below the summary (lines joined with newlines). */
  details?: string;
  /** The command's own flags (the global ones come on top). None when absent. */
  options?: OptionSpecs;
  run: (ctx: Ctx, input: ParsedInput) => Promise<number>;
}

export interface ParsedInput {
  positionals: string[];
  options: OptionValues;
}

export const GLOBAL_OPTIONS: OptionSpecs = {
  'hub-url': {
    type: 'string',
    value: 'URL',
    description: 'the hub (default $FLOTILLA_HUB_URL or http://127.0.0.1:8080)',
  },
  token: { type: 'string', value: 'TOKEN', description: 'API token (default $FLOTILLA_TOKEN)' },
  'token-file': { type: 'string', value: 'FILE', description: 'read the API token from FILE' },
  'ca-file': {
    type: 'string',
    value: 'FILE',
    description: "CA (PEM) that verifies the hub's certificate (default $FLOTILLA_CA_FILE, else the system's CAs)",
  },
  insecure: {
    type: 'boolean',
    description: "skip checking the hub's certificate, and allow plain http:// to a host other than loopback",
  },
  output: { type: 'string', short: 'o', value: 'FORMAT', description: 'table (default), json or yaml' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

export type Parsed<Ctx> =
  { kind: 'help'; text: string } | { kind: 'command'; command: CommandSpec<Ctx>; input: ParsedInput };

function takesValue(token: string, specs: OptionSpecs): boolean {
  if (token.includes('=')) return false;
  if (token.startsWith('--')) return specs[token.slice(2)]?.type === 'string';
  const short = token.slice(1);
  return Object.values(specs).some((s) => s.short === short && s.type === 'string');
}

/** Splits argv into the command words (at most two) and the rest, keeping global flags in the rest. */
function splitCommand(argv: readonly string[]): { words: string[]; rest: string[]; help: boolean } {
  const words: string[] = [];
  const rest: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i]!;
    if (words.length === 2 || t === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (!t.startsWith('-') || t === '-') {
      words.push(t);
      continue;
    }
    if (t === '-h' || t === '--help') help = true;
    else if (!(t.slice(2).split('=')[0]! in GLOBAL_OPTIONS) && !/^-o/.test(t))
      throw usageError(`unknown flag ${t.split('=')[0]} before the command`);
    rest.push(t);
    if (takesValue(t, GLOBAL_OPTIONS) && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  return { words, rest, help };
}

function optionHelp(specs: OptionSpecs): string[] {
  return Object.entries(specs).map(([name, s]) => {
    const flag = `${s.short ? `-${s.short}, ` : '    '}--${name}${s.value ? ` ${s.value}` : ''}`;
    return `  ${flag.padEnd(30)} ${s.description}`;
  });
}

export function commandUsage<Ctx>(c: CommandSpec<Ctx>): string {
  const args = (c.args ?? []).map((a) => ` ${a}`).join('');
  return `flotilla ${c.group} ${c.verb}${args}${Object.keys(c.options ?? {}).length > 0 ? ' [flags]' : ''}`;
}

const GLOBAL_HELP = ['Global flags:', ...optionHelp(GLOBAL_OPTIONS), ''];

function commandHelp<Ctx>(c: CommandSpec<Ctx>): string {
  const own = optionHelp(c.options ?? {});
  return [
    `Usage: ${commandUsage(c)}`,
    '',
    c.summary,
    ...(c.details !== undefined ? ['', c.details] : []),
    ...(own.length > 0 ? ['', 'Flags:', ...own] : []),
    '',
    ...GLOBAL_HELP,
  ].join('\n');
}

/** The help text: every command, or one group's, or one command with its flags. */
export function helpText<Ctx>(commands: readonly CommandSpec<Ctx>[], group?: string, verb?: string): string {
  const one = commands.find((c) => c.group === group && c.verb === verb);
  if (one) return commandHelp(one);
  const shown = commands.filter((c) => group === undefined || c.group === group);
  const list = (shown.length > 0 ? shown : commands).map(
    (c) => `  ${commandUsage(c).slice(9).padEnd(46)} ${c.summary}`,
  );
  return [
    'Usage: flotilla [global flags] COMMAND [args] [flags]',
    '',
    'Commands:',
    ...list,
    '',
    ...GLOBAL_HELP,
    'Exit codes: 0 ok, 1 error (the hub refused or could not be reached), 2 usage error.',
    '',
  ].join('\n');
}

function checkPositionals<Ctx>(c: CommandSpec<Ctx>, positionals: string[]): void {
  const args = c.args ?? [];
  const variadic = args.at(-1)?.endsWith('...') ?? false;
  const min = args.length;
  if (positionals.length < min) {
    throw usageError(`missing ${args.slice(positionals.length).join(' ')}; usage: ${commandUsage(c)}`);
  }
  if (!variadic && positionals.length > min) {
    throw usageError(`unexpected argument "${positionals[min]}"; usage: ${commandUsage(c)}`);
  }
}

/** The command named by `group verb`; an unknown or missing verb is a usage error listing the group's. */
function findCommand<Ctx>(
  commands: readonly CommandSpec<Ctx>[],
  group: string,
  verb: string | undefined,
): CommandSpec<Ctx> {
  if (!commands.some((c) => c.group === group)) throw usageError(`unknown command "${group}"; see flotilla --help`);
  const command = commands.find((c) => c.group === group && c.verb === verb);
  if (command) return command;
  const verbs = commands.filter((c) => c.group === group).map((c) => c.verb);
  const what = verb === undefined ? `missing ${group} command` : `unknown ${group} command "${verb}"`;
  throw usageError(`${what}; one of: ${verbs.join(', ')}`);
}

/** The flags and positionals after the command words, strictly against the global flags and the command's. */
function parseFlags<Ctx>(command: CommandSpec<Ctx>, rest: string[]): { values: OptionValues; positionals: string[] } {
  try {
    return parseArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    }) as { values: OptionValues; positionals: string[] };
  } catch (cause) {
    throw usageError(`${(cause as Error).message.split('\n')[0]}; usage: ${commandUsage(command)}`, { cause });
  }
}

/** Parses argv (without `node` and the script) against the command table. */
export function parseCommandLine<Ctx>(argv: readonly string[], commands: readonly CommandSpec<Ctx>[]): Parsed<Ctx> {
  const { words, rest, help } = splitCommand(argv);
  const [group, verb] = words;
  if (group === undefined || (help && verb === undefined)) {
    if (group !== undefined && !commands.some((c) => c.group === group)) throw usageError(`unknown command "${group}"`);
    return { kind: 'help', text: helpText(commands, group) };
  }
  const command = findCommand(commands, group, verb);
  const parsed = parseFlags(command, rest);
  if (help || parsed.values['help'] === true) return { kind: 'help', text: helpText(commands, group, verb) };
  checkPositionals(command, parsed.positionals);
  return { kind: 'command', command, input: { positionals: parsed.positionals, options: parsed.values } };
}

/** A string flag's value (the last one when repeated). */
export function str(opts: OptionValues, name: string): string | undefined {
  const v = opts[name];
  if (Array.isArray(v)) return v.at(-1);
  return typeof v === 'string' ? v : undefined;
}

/** A non-negative integer flag; anything else is a usage error naming the flag. */
export function intFlag(opts: OptionValues, name: string): number | undefined {
  const v = str(opts, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw usageError(`--${name} must be a non-negative integer (got "${v}")`);
  return Number(v);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether something typed on the command line is an API id (a UUID) rather than a name. */
export const isUuid = (s: string): boolean => UUID.test(s);
