/**
 * A command's flags and --help text, generated from settings tables (setting.ts): each setting
 * with a flag becomes an option under its area's heading, and the settings read only from the
 * environment are listed after the options. Commander hands the flags over as given; the reader
 * (reader.ts) applies variables, defaults and validation, so every entry point validates alike.
 */
import { Option, type Command } from 'commander';
import type { Setting, SettingsTable } from './setting.js';

/** One area's settings under a --help heading. */
export interface SettingsGroup {
  /** The --help heading, e.g. `Webhook`. */
  title: string;
  settings: SettingsTable;
}

/** Adds the flags of `groups` to `command`; returns the command for chaining. */
export function addSettingOptions(command: Command, groups: readonly SettingsGroup[]): Command {
  const envOnly: string[] = [];
  for (const { title, settings } of groups) {
    for (const setting of Object.values(settings)) {
      if (setting.flag === undefined) envOnly.push(`  ${setting.env?.join(', ')}  ${settingHelp(setting, false)}`);
      else command.addOption(option(setting, setting.flag).helpGroup(`${title} options:`));
    }
  }
  if (envOnly.length > 0)
    command.addHelpText('after', `\nSettings read only from the environment:\n${envOnly.join('\n')}`);
  return command;
}

function option(setting: Setting<unknown>, flag: string): Option {
  if (setting.negatable) return new Option(`--no-${flag}`, settingHelp(setting));
  return new Option(`--${flag} <${setting.kind.arg}>`, settingHelp(setting));
}

/**
 * The help, then the variables (unless `withEnv` is false) and the default:
 * `port of … ($FLOTILLA_HEALTH_PORT, default 8080)`.
 */
export function settingHelp(setting: Setting<unknown>, withEnv = true): string {
  const env = withEnv ? (setting.env ?? []).map((v) => (setting.negatable ? `$${v}=false` : `$${v}`)) : [];
  const notes = env.length === 0 ? [] : [env.join(', else ')];
  if (setting.required) notes.push('required');
  else if (setting.defaultHelp !== undefined) notes.push(setting.defaultHelp);
  else if (setting.default !== undefined && !setting.negatable) notes.push(`default ${show(setting)}`);
  return notes.length === 0 ? setting.help : `${setting.help} (${notes.join(', ')})`;
}

function show(setting: Setting<unknown>): string {
  return setting.kind.show ? setting.kind.show(setting.default) : String(setting.default);
}
