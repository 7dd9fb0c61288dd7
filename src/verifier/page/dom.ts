/**
 * The few DOM types the page's script uses. The repository type-checks against Bun's types
 * only (tsconfig `lib: ["ESNext"]`); adding the whole DOM library would retype `fetch` and
 * `Request` for the server code and its tests, so the page declares just what it touches.
 */

export interface DomFileList {
  readonly length: number;
  item(index: number): File | null;
}

export interface DomEvent {
  preventDefault(): void;
  readonly dataTransfer?: { readonly files: DomFileList } | null;
}

export interface DomElement {
  textContent: string | null;
  className: string;
  hidden: boolean;
  readonly classList: { add(name: string): void; remove(name: string): void };
  setAttribute(name: string, value: string): void;
  append(...nodes: (DomElement | string)[]): void;
  replaceChildren(...nodes: (DomElement | string)[]): void;
  addEventListener(type: string, listener: (event: DomEvent) => void): void;
  focus(): void;
}

export interface DomInput extends DomElement {
  value: string;
  disabled: boolean;
  readonly files: DomFileList | null;
}

export interface DomDocument {
  getElementById(id: string): DomElement | null;
  createElement(tag: string): DomElement;
  addEventListener(type: string, listener: (event: DomEvent) => void): void;
}

/** The page's document; only ever read in the browser. */
export function pageDocument(): DomDocument {
  return (globalThis as unknown as { document: DomDocument }).document;
}
