/**
 * The terminal under the admin UI, and the prompt wrappers every screen uses.
 *
 * clack answers both Escape and Ctrl-C with the same cancel symbol. The UI needs them apart:
 * Escape goes back one level, Ctrl-C leaves. A keypress listener registered before any prompt
 * (so it runs before clack's own) remembers the last key; when a prompt is cancelled, that key
 * decides. Ctrl-C arrives as a key only while a prompt holds the terminal in raw mode; between
 * prompts it is a SIGINT, which `runAdmin` handles the same way.
 *
 * The UI draws on the terminal's alternate screen, like a pager or an editor: each screen
 * starts clean, and leaving restores what was there before, so a minted key shown in the UI
 * does not stay in the terminal's scrollback.
 */
import * as p from "@clack/prompts";
import { emitKeypressEvents } from "node:readline";
import type { Core } from "../../app/core.ts";
import { DomainError, OpsError } from "../../lib/errors.ts";

/** What every screen works with. */
export interface Ctx {
  readonly ui: Ui;
  readonly core: Core;
  /** Who makes changes, for the audit trail: `os:<user> (uid N)`. */
  readonly actor: string;
  /** The environment `status` reads its settings from (the same as the UI's). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Thrown by a prompt wrapper when the person pressed Ctrl-C: unwinds to `runAdmin`, which leaves. */
export class ExitRequested extends Error {
  override readonly name = "ExitRequested";
}

/** What a prompt wrapper returns when the person pressed Escape. */
export const BACK: unique symbol = Symbol("back");
export type Back = typeof BACK;

const ESC = "\x1b[";
export const TERMINAL = {
  enterAlternateScreen: `${ESC}?1049h`,
  leaveAlternateScreen: `${ESC}?1049l`,
  // Home and erase the screen; not ESC[3J, which in some terminals also erases the main
  // screen's scrollback, which is not ours to touch.
  clear: `${ESC}H${ESC}2J`,
  showCursor: `${ESC}?25h`,
} as const;

type Flash = { kind: "success" | "error" | "info" | "warn"; text: string };

export interface Ui {
  /** Clears the screen, draws the header and any messages left by the previous action. */
  screen(heading: string): void;
  /** Leaves a message for the next screen (results of an action survive the redraw). */
  flash(kind: Flash["kind"], text: string): void;
  select<T>(message: string, options: p.Option<T>[], initialValue?: T): Promise<T | Back>;
  text(message: string, validate: (value: string) => string | undefined, placeholder?: string): Promise<string | Back>;
  confirm(message: string, initialValue: boolean): Promise<boolean | Back>;
  multiselect<T>(message: string, options: p.Option<T>[]): Promise<T[] | Back>;
  note(body: string, title?: string): void;
  info(text: string): void;
  warn(text: string): void;
  /** A plain line under the guide bar. */
  message(text: string): void;
}

export function createUi(io: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream }, title: string, subtitle: string): Ui {
  const { stdin, stdout } = io;
  // The first call decides how long a lone ESC waits for the rest of an escape sequence
  // before it counts as the Escape key; Node's default is 500 ms, clack's own is 50 ms.
  emitKeypressEvents(stdin, { escapeCodeTimeout: 50 } as unknown as Parameters<typeof emitKeypressEvents>[1]);
  let last: { name?: string; ctrl?: boolean; sequence?: string } | undefined;
  stdin.on("keypress", (_s: string | undefined, key: typeof last) => {
    last = key;
  });
  const pending: Flash[] = [];
  const common = { input: stdin, output: stdout };

  function settle<T>(value: T | typeof p.CANCEL_SYMBOL): T | Back {
    if (!p.isCancel(value)) return value as T;
    const key = last;
    last = undefined;
    if (key?.sequence === "\x03" || (key?.ctrl === true && key.name === "c")) throw new ExitRequested();
    return BACK;
  }

  return {
    screen(heading) {
      stdout.write(TERMINAL.clear);
      p.intro(`${title}  ›  ${heading}`, common);
      p.log.message(subtitle, { ...common, symbol: p.S_BAR, spacing: 0 });
      for (const f of pending.splice(0)) p.log[f.kind](f.text, common);
    },
    flash(kind, text) {
      pending.push({ kind, text });
    },
    async select(message, options, initialValue) {
      last = undefined;
      return settle(await p.select({ ...common, message, options, initialValue }));
    },
    async text(message, validate, placeholder) {
      last = undefined;
      return settle(await p.text({ ...common, message, placeholder, validate: (v) => validate(v ?? "") }));
    },
    async confirm(message, initialValue) {
      last = undefined;
      return settle(await p.confirm({ ...common, message, initialValue }));
    },
    async multiselect(message, options) {
      last = undefined;
      return settle(await p.multiselect({ ...common, message, options, required: false }));
    },
    note(body, noteTitle) {
      p.note(body, noteTitle, common);
    },
    info(text) {
      p.log.info(text, common);
    },
    warn(text) {
      p.log.warn(text, common);
    },
    message(text) {
      p.log.message(text, { ...common, symbol: p.S_BAR, spacing: 0 });
    },
  };
}

/** A refusal from a service, as one line for the person (DomainError messages are safe to show). */
export function describeError(e: unknown): string {
  // An operation refused (a key rotation under way): its message says why and what to do.
  if (e instanceof DomainError || e instanceof OpsError) return e.message;
  return `Failed: ${e instanceof Error ? e.message : String(e)}`;
}

/** `validate` for clack: the first line of a DomainError thrown by `fn`, or undefined. */
export function validateWith(fn: (value: string) => unknown): (value: string) => string | undefined {
  return (value) => {
    try {
      fn(value);
      return undefined;
    } catch (e) {
      return describeError(e);
    }
  };
}

export const time = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "Z"));

/** A ledger consensus time `seconds.nanoseconds` as ISO text, keeping the ledger's own form beside it. */
export function consensusTime(at: string | null): string {
  if (at === null) return "-";
  const seconds = Number(at.split(".")[0]);
  return Number.isFinite(seconds) ? `${time(seconds * 1000)} (${at})` : at;
}

/** Cuts text to `n` characters (by code point) for one-line list labels. */
export function cut(text: string, n: number): string {
  const chars = [...text];
  return chars.length <= n ? text : chars.slice(0, n - 1).join("") + "…";
}

export const onOff = (b: boolean) => (b ? "on" : "off");
