/**
 * The few DOM types the enrolment and signing pages' scripts use. The repository type-checks
 * against Bun's types only (tsconfig `lib: ["ESNext"]`); adding the whole DOM library would
 * retype `fetch` and `Request` for the server code and its tests, so the pages declare just what
 * they touch (as src/verifier/page/dom.ts does for the receipt page).
 */

export interface DomFileList {
  readonly length: number;
  item(index: number): File | null;
}

export interface DomEvent {
  preventDefault(): void;
  readonly key?: string;
  readonly dataTransfer?: { readonly files: DomFileList; dropEffect: string } | null;
}

export interface DomElement {
  textContent: string | null;
  className: string;
  hidden: boolean;
  tabIndex: number;
  readonly classList: { add(name: string): void; remove(name: string): void; toggle(name: string, force?: boolean): void };
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  append(...nodes: (DomElement | string)[]): void;
  replaceChildren(...nodes: (DomElement | string)[]): void;
  addEventListener(type: string, listener: (event: DomEvent) => void): void;
  focus(): void;
}

export interface DomControl extends DomElement {
  value: string;
  disabled: boolean;
}

export interface DomInput extends DomControl {
  readonly files: DomFileList | null;
}

export interface DomLink extends DomElement {
  href: string;
  download: string;
}

export interface DomDialog extends DomElement {
  readonly open: boolean;
  showModal(): void;
  close(): void;
}

export interface DomDocument {
  getElementById(id: string): DomElement | null;
  createElement(tag: string): DomElement;
  addEventListener(type: string, listener: (event: DomEvent) => void): void;
}

export interface DomWindow {
  readonly document: DomDocument;
  readonly location: { readonly pathname: string; readonly origin: string; readonly hostname: string };
  /** False on plain http other than localhost: browsers then offer no passkeys at all. */
  readonly isSecureContext: boolean;
  readonly URL: { createObjectURL(blob: Blob): string; revokeObjectURL(url: string): void };
}

/** The page's window; only ever read in the browser. */
export function pageWindow(): DomWindow {
  return globalThis as unknown as DomWindow;
}

/** The element with this id, or an error naming it (a page and its script out of step). */
export function byId<T extends DomElement = DomElement>(id: string): T {
  const el = pageWindow().document.getElementById(id);
  if (el === null) throw new Error(`the page lacks #${id}`);
  return el as T;
}

/** A new element with text (set as text, never parsed as HTML). */
export function el<T extends DomElement = DomElement>(tag: string, text?: string, className?: string): T {
  const node = pageWindow().document.createElement(tag) as T;
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}
