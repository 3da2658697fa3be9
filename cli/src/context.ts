/** What every command gets: the hub client, the output format and the process's side, injected. */
import type { CommandSpec } from './args.js';
import type { HubClient } from './client.js';
import { renderData, renderTable, type Column, type OutputFormat } from './output.js';

/** The process's side of a command: output, files and time. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads a file; `-` is standard input. */
  readFile: (path: string) => Promise<string>;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
}

export interface CliContext extends CliIo {
  client: HubClient;
  format: OutputFormat;
}

export type Command = CommandSpec<CliContext>;

/** Prints `value` as JSON/YAML, or `rows` as a table under `columns`. */
export function print<T>(ctx: CliContext, value: unknown, columns: Column<T>[], rows: readonly T[]): void {
  ctx.stdout(ctx.format === 'table' ? renderTable(columns, rows) : renderData(ctx.format, value));
}

/** A one-line confirmation in table mode; the object itself in JSON/YAML mode. */
export function confirm(ctx: CliContext, line: string, value: unknown): void {
  ctx.stdout(ctx.format === 'table' || value === undefined ? `${line}\n` : renderData(ctx.format, value));
}
