/**
 * The agent's one configuration mechanism. Every area (the manager process, leader election, the
 * webhook, the hub link, the ImagePullJob controller, the node daemon) declares its settings in a
 * table: for each key, the flag, the environment variables, how the text is read (a Kind), the
 * default and the help. The commands' flags and --help text are generated from the tables
 * (options.ts), and the values are read once at start (reader.ts): the flag, else each variable in
 * order, else the default, with every problem naming the flag and the variable.
 */

/** How a setting's text becomes its value. */
export interface Kind<T> {
  /** Placeholder of the flag's value in --help, e.g. `duration` for `--lease-duration <duration>`. */
  readonly arg: string;
  /**
   * The value of a trimmed text. A text that cannot be read is reported through `problem` (say
   * what was expected and what was given: `must be …, got "…"`) and gives undefined, which keeps
   * the default.
   */
  parse(text: string, problem: (message: string) => void): T | undefined;
  /** How a default value reads in --help; String(value) when absent. */
  show?(value: T): string;
  /** An empty text is a value (an empty list) rather than "not given". */
  readonly emptyIsValue?: boolean;
}

/** One setting; see the file comment. */
export interface Setting<T> {
  /** The flag, without the leading dashes; absent for a setting read only from the environment. */
  readonly flag?: string;
  /** Only the switch `--no-<flag>` exists, which sets false (commander's negatable option). */
  readonly negatable?: true;
  /** Variables read, in order, when the flag is not given (the Helm chart sets them). */
  readonly env?: readonly string[];
  readonly kind: Kind<T>;
  /** The value when nothing is given; without one the value is undefined (or a problem, if required). */
  readonly default?: T;
  /** Nothing given is a problem. */
  readonly required?: true;
  /**
   * What --help says in place of `default <value>` when the default is no fixed value (`else
   * in-cluster credentials`, `default: --namespace`).
   */
  readonly defaultHelp?: string;
  readonly help: string;
}

/** An area's settings by key; the key is the field of the area's configuration it fills. */
export type SettingsTable = Readonly<Record<string, Setting<unknown>>>;

/**
 * The value a setting gives: its kind's type, possibly undefined unless it has a default or is
 * required. (The default's own type is not checked against the kind here: a test reads every
 * default back through its kind.)
 */
export type ValueOf<S> = S extends { kind: Kind<infer T> }
  ? S extends { default: unknown } | { required: true }
    ? T
    : T | undefined
  : never;

/** The values a table gives, by key. */
export type ValuesOf<Table extends SettingsTable> = { -readonly [K in keyof Table]: ValueOf<Table[K]> };

/** Every default of a table (undefined where there is none). */
export function defaultsOf<Table extends SettingsTable>(table: Table): ValuesOf<Table> {
  return Object.fromEntries(Object.entries(table).map(([key, s]) => [key, s.default])) as ValuesOf<Table>;
}

/** How commander names a flag's value: `webhook-port` → `webhookPort`. */
export function flagKey(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
