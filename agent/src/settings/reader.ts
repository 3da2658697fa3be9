/**
 * Reads settings tables (setting.ts) from what a command was given: its flags as commander hands
 * them over, the environment, and the machine (host name, files). A reader collects the problems
 * of every table it reads, so a command names them all at once and then fails (check()).
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { AgentError, type AgentErrorCode } from '../errors.js';
import { flagKey, type Setting, type SettingsTable, type ValuesOf } from './setting.js';

/** A command's flags as commander hands them over: strings, and booleans for `--no-*` switches. */
export type Flags = Readonly<Record<string, string | boolean | undefined>>;

/** The environment, as process.env. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What settings read from the machine, injectable for tests. */
export interface ConfigHost {
  hostname(): string;
  fileExists(path: string): boolean;
  readFile(path: string): string;
}

export const realHost: ConfigHost = {
  hostname,
  fileExists: existsSync,
  readFile: (p) => readFileSync(p, 'utf8'),
};

/** Where a setting's text came from: undefined for the flag, else the variable. */
interface Given {
  text: string;
  variable: string | undefined;
}

export class SettingsReader {
  /** Every problem found so far, each naming the flag and the variable. */
  readonly problems: string[] = [];

  constructor(
    private readonly flags: Flags,
    private readonly env: Env,
    readonly host: ConfigHost = realHost,
  ) {}

  /** The values of `table`: each flag, else its variables in order, else its default. */
  read<Table extends SettingsTable>(table: Table): ValuesOf<Table> {
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(table)) values[key] = this.value(setting);
    return values as ValuesOf<Table>;
  }

  /** Whether `setting` is given at all (by flag or variable), whether or not it reads. */
  given(setting: Setting<unknown>): boolean {
    return this.source(setting) !== undefined;
  }

  /** Records a problem with `setting`, naming its flag and variable. */
  problem(setting: Setting<unknown>, message: string): void {
    this.problems.push(`${settingName(setting, this.source(setting)?.variable)}: ${message}`);
  }

  /** An environment variable that is no setting (KUBERNETES_SERVICE_HOST, a retired variable). */
  variable(name: string): string | undefined {
    return this.env[name];
  }

  /** Throws an AgentError with `code` naming every problem, if there is one. */
  check(code: AgentErrorCode, prefix = ''): void {
    if (this.problems.length > 0) throw new AgentError(code, `${prefix}${this.problems.join('; ')}`);
  }

  /** The setting's value; defaults are copied, so no two configurations share a list. */
  private value(setting: Setting<unknown>): unknown {
    const given = this.source(setting);
    if (given === undefined) {
      if (setting.required) this.problems.push(`${settingName(setting, undefined)}: required`);
      return structuredClone(setting.default);
    }
    const name = settingName(setting, given.variable);
    const value = setting.kind.parse(given.text, (message) => this.problems.push(`${name}: ${message}`));
    return value === undefined ? structuredClone(setting.default) : value;
  }

  /**
   * The text that sets `setting`: the flag if given, else the first variable that is set. A blank
   * text counts as not given, unless the kind reads it (an empty list).
   */
  private source(setting: Setting<unknown>): Given | undefined {
    const counts = (text: string | undefined): text is string =>
      text !== undefined && (setting.kind.emptyIsValue === true || text.trim() !== '');
    const flag = setting.flag === undefined ? undefined : this.flags[flagKey(setting.flag)];
    // A `--no-*` switch is true unless given (commander's default), and only false says something.
    if (setting.negatable ? flag === false : counts(flag === undefined ? undefined : String(flag))) {
      return { text: String(flag).trim(), variable: undefined };
    }
    for (const variable of setting.env ?? []) {
      const text = this.env[variable];
      if (counts(text)) return { text: text.trim(), variable };
    }
    return undefined;
  }
}

/**
 * How problems name a setting: `--flag (VARIABLE)`, the variable being the one the text came from,
 * else the first; `--flag` or `VARIABLE` alone when the setting has only one of them.
 */
export function settingName(setting: Setting<unknown>, variable?: string): string {
  const env = variable ?? setting.env?.[0];
  if (setting.flag === undefined) return env ?? '(unnamed setting)';
  return env === undefined ? `--${setting.flag}` : `--${setting.flag} (${env})`;
}
