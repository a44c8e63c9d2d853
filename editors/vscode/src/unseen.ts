// What is new since I last looked (issue 23 item 10). "Waiting for the user" is the server's
// (`waiting` of `transcript/sessions`, server/PROTOCOL.md); "unseen" is ours: what the user has
// looked at is known only here.
//
// * A session's output counts as seen up to the file's size when one of its editors (view or
//   raw) showed its last line in the focused window. The sizes are kept per file in
//   `globalState` (`transcript-ls.seen`); on the first run every listed session is taken as
//   seen, so only what changes from then on is new. A session is unseen when its `bytes` grew
//   past what was seen, or it appeared since.
// * In a view, the text the user last saw to the end is kept; when the view changes, the first
//   line that differs is where the new output starts: a code lens `── new since you last
//   looked ──` sits above it (a line of its own, like a marker in a chat) with a rule and an
//   overview-ruler mark, until the next change after the user has seen the end again. What
//   was seen of each view is kept in `globalState` too (`transcript-ls.seenViews`: a hash per
//   line, for the 100 views seen last), so a view opened after a restart shows the marker
//   where the output the user had not seen starts (issue 23 item 10).
// * Commands: Transcript: Jump to New Output (alt+n in a view) and Jump to Newest Turn
//   (alt+end).
import * as fs from 'fs';
import * as vscode from 'vscode';
import type { Session } from './sessions';

const SEEN_KEY = 'transcript-ls.seen';
/** globalState key of what was seen of each view: view key -> [`Seen`]. */
const SEEN_VIEWS_KEY = 'transcript-ls.seenViews';
/** Views kept in `SEEN_VIEWS_KEY` (the ones seen last), and the longest view kept. */
const SEEN_VIEWS_MAX = 100;
const SEEN_VIEW_LINES_MAX = 100_000;

/** What the user saw of a view to its end: a hash per line and where its body (the first
 * `## ` heading) starts; the header above changes with every append. */
interface Seen {
  h: string[];
  body: number;
}
/** The text of the marker above the first unseen line. */
export const MARKER_TEXT = '── new since you last looked ──';

interface ViewState {
  /** What the user saw to the end last (undefined: not yet seen). */
  seen?: Seen;
  /** What is kept of it in `globalState` (written when `seen` differs from it). */
  kept?: Seen;
  /** 0-based line where unseen output starts, if any. */
  marker?: number;
}

export class Unseen implements vscode.Disposable, vscode.CodeLensProvider {
  private seen: Record<string, number>;
  private readonly views = new Map<string, ViewState>();
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEmitter.event;
  private readonly changedEmitter = new vscode.EventEmitter<void>();
  /** Fired when a session became seen (the tree and pickers redraw their marks). */
  readonly onDidChangeSeen = this.changedEmitter.event;
  private readonly subs: vscode.Disposable[] = [];
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderColor: new vscode.ThemeColor('editorInfo.foreground'),
    borderStyle: 'solid',
    borderWidth: '1px 0 0 0',
    overviewRulerColor: new vscode.ThemeColor('editorInfo.foreground'),
    overviewRulerLane: vscode.OverviewRulerLane.Full,
  });

  constructor(
    private readonly state: vscode.Memento,
    private readonly viewScheme: string,
    private readonly fileOf: (uri: vscode.Uri) => vscode.Uri,
  ) {
    this.seen = { ...(state.get<Record<string, number>>(SEEN_KEY) ?? {}) };
    this.subs.push(
      this.decoration,
      this.lensEmitter,
      this.changedEmitter,
      vscode.languages.registerCodeLensProvider({ scheme: viewScheme }, this),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.look(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((e) => e && this.look(e)),
      vscode.window.onDidChangeVisibleTextEditors((eds) => eds.forEach((e) => this.look(e))),
      vscode.window.onDidChangeWindowState((w) => w.focused && vscode.window.visibleTextEditors.forEach((e) => this.look(e))),
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e.document)),
      vscode.workspace.onDidCloseTextDocument((d) => this.views.delete(d.uri.toString())),
    );
    setTimeout(() => vscode.window.visibleTextEditors.forEach((e) => this.look(e)), 0);
  }

  /** True when `s` has output the user has not seen. */
  isUnseen(s: Session): boolean {
    const seen = this.seen[s.uri];
    return seen === undefined ? this.initialized() : s.bytes > seen;
  }

  private initialized(): boolean {
    return this.state.get<boolean>(`${SEEN_KEY}.initialized`) === true;
  }

  /** Takes the sessions of the first complete list ever loaded as seen (nothing is new on a
   * first run). */
  async noteList(list: Session[], complete: boolean): Promise<void> {
    if (!complete || this.initialized()) {
      return;
    }
    for (const s of list) {
      this.seen[s.uri] ??= s.bytes;
    }
    await this.state.update(SEEN_KEY, this.seen);
    await this.state.update(`${SEEN_KEY}.initialized`, true);
  }

  /** The line where unseen output starts in the view `uri`, if any. */
  markerOf(uri: vscode.Uri): number | undefined {
    return this.views.get(uri.toString())?.marker;
  }

  private isTranscriptEditor(ed: vscode.TextEditor): boolean {
    const d = ed.document;
    return d.uri.scheme === this.viewScheme || (d.uri.scheme === 'file' && (d.languageId === 'jsonl' || d.languageId === 'transcript-jsonl'));
  }

  /** The user looks at `ed`: when its last line is on screen in the focused window, what it
   * shows is seen. */
  private look(ed: vscode.TextEditor): void {
    if (!this.isTranscriptEditor(ed) || !vscode.window.state.focused) {
      return;
    }
    if (!vscode.window.visibleTextEditors.includes(ed)) {
      return;
    }
    const doc0 = ed.document;
    if (doc0.uri.scheme === this.viewScheme && !this.views.get(doc0.uri.toString())?.seen) {
      // What was seen of the view before (an earlier run of the editor) is where "new" starts
      // from; else what the view holds when first shown.
      const kept = this.state.get<Record<string, Seen>>(SEEN_VIEWS_KEY)?.[viewKey(doc0.uri)];
      this.viewState(doc0.uri).seen = kept ?? snapshot(doc0);
      this.viewState(doc0.uri).kept = kept;
      if (kept) {
        this.changed(doc0);
        return; // (changed() looks again)
      }
    }
    const last = ed.document.lineCount - 1;
    const ranges = ed.visibleRanges;
    if (ranges.length === 0 || ranges[ranges.length - 1].end.line < last) {
      return;
    }
    const doc = ed.document;
    if (doc.uri.scheme === this.viewScheme) {
      const v = this.viewState(doc.uri);
      v.seen = snapshot(doc);
      if (!v.kept || !sameSeen(v.kept, v.seen)) {
        v.kept = v.seen;
        void this.keepView(doc.uri, v.seen);
      }
    }
    void this.markSeen(this.fileOf(doc.uri));
  }

  /** Keeps what was seen of a view in `globalState` (the last [`SEEN_VIEWS_MAX`] views). */
  private async keepView(uri: vscode.Uri, seen: Seen): Promise<void> {
    if (seen.h.length > SEEN_VIEW_LINES_MAX) {
      return;
    }
    const all = { ...(this.state.get<Record<string, Seen>>(SEEN_VIEWS_KEY) ?? {}) };
    const key = viewKey(uri);
    delete all[key]; // (re-inserted last: the most recent)
    all[key] = seen;
    const keys = Object.keys(all);
    for (const k of keys.slice(0, Math.max(0, keys.length - SEEN_VIEWS_MAX))) {
      delete all[k];
    }
    await this.state.update(SEEN_VIEWS_KEY, all);
  }

  private viewState(uri: vscode.Uri): ViewState {
    const key = uri.toString();
    let v = this.views.get(key);
    if (!v) {
      v = {};
      this.views.set(key, v);
    }
    return v;
  }

  private async markSeen(file: vscode.Uri): Promise<void> {
    let size: number;
    try {
      size = (await fs.promises.stat(file.fsPath)).size;
    } catch {
      return;
    }
    const key = file.toString();
    if (this.seen[key] === size) {
      return;
    }
    this.seen[key] = size;
    await this.state.update(SEEN_KEY, this.seen);
    this.changedEmitter.fire();
  }

  /** A view changed: its marker goes where its text first differs from what was seen. */
  private changed(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== this.viewScheme) {
      return;
    }
    const v = this.viewState(doc.uri);
    if (!v.seen) {
      return;
    }
    const cur = snapshot(doc);
    const now = cur.h;
    const was = v.seen.h;
    // The header above the first `## ` heading (title, the session's figures) changes with
    // every append: compare from the first heading of each text on.
    const a = cur.body;
    const b = v.seen.body;
    let k = 0;
    while (a + k < now.length && b + k < was.length && now[a + k] === was[b + k]) {
      k++;
    }
    if (a + k < now.length) {
      v.marker = a + k;
    } else if (now.length - a !== was.length - b) {
      v.marker = Math.max(0, now.length - 1); // lines went away at the end: mark the last one
    } else {
      v.marker = undefined;
    }
    this.redraw(doc.uri);
    for (const ed of vscode.window.visibleTextEditors) {
      if (ed.document === doc) {
        this.look(ed);
      }
    }
  }

  private redraw(uri: vscode.Uri): void {
    const marker = this.markerOf(uri);
    for (const ed of vscode.window.visibleTextEditors) {
      if (ed.document.uri.toString() === uri.toString()) {
        ed.setDecorations(this.decoration, marker === undefined ? [] : [new vscode.Range(marker, 0, marker, 0)]);
      }
    }
    this.lensEmitter.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const marker = this.markerOf(doc.uri);
    if (marker === undefined || marker >= doc.lineCount) {
      return [];
    }
    const range = new vscode.Range(marker, 0, marker, 0);
    return [
      new vscode.CodeLens(range, { title: MARKER_TEXT, command: 'transcript-ls.jumpToNewestTurn', tooltip: 'Output the view got since you last looked at its end. Click: jump to the newest turn' }),
    ];
  }

  /** Transcript: Jump to New Output. */
  async jumpToNew(): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    const marker = ed && this.markerOf(ed.document.uri);
    if (!ed || marker === undefined) {
      vscode.window.setStatusBarMessage('Transcript: no new output since you last looked', 3000);
      return;
    }
    reveal(ed, marker);
  }

  /** Transcript: Jump to Newest Turn: the last `## Turn` heading of a view, the last turn of
   * the outline elsewhere. */
  async jumpToNewestTurn(): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    if (!ed) {
      return;
    }
    let line: number | undefined;
    if (ed.document.uri.scheme === this.viewScheme) {
      for (let i = ed.document.lineCount - 1; i >= 0; i--) {
        if (ed.document.lineAt(i).text.startsWith('## Turn ')) {
          line = i;
          break;
        }
      }
    } else {
      const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', ed.document.uri);
      const turns = (symbols ?? []).filter((s) => /^Turn \d+/.test(s.name));
      line = turns.length > 0 ? turns[turns.length - 1].range.start.line : undefined;
    }
    if (line === undefined) {
      vscode.window.setStatusBarMessage('Transcript: this transcript has no turn yet', 3000);
      return;
    }
    reveal(ed, line);
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
  }
}

/** What a view shows now, as kept in [`Seen`]. */
function snapshot(doc: vscode.TextDocument): Seen {
  const ls = doc.getText().split('\n');
  return { h: ls.map(hash), body: Math.max(0, ls.findIndex((l) => l.startsWith('## '))) };
}

function sameSeen(a: Seen, b: Seen): boolean {
  return a.body === b.body && a.h.length === b.h.length && a.h.every((x, i) => x === b.h[i]);
}

/** A line's 32-bit FNV-1a hash in base 36 (what is kept of a line, not its text). */
function hash(line: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < line.length; i++) {
    h ^= line.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/** The key of a view in [`SEEN_VIEWS_KEY`]: its file and its `verbose` query (the tab title in
 * the URI may change). */
function viewKey(uri: vscode.Uri): string {
  const p = new URLSearchParams(uri.query);
  const file = p.get('path') ?? uri.path;
  return `${file}?verbose=${p.get('verbose') ?? ''}`;
}

function reveal(ed: vscode.TextEditor, line: number): void {
  const pos = new vscode.Position(line, 0);
  ed.selection = new vscode.Selection(pos, pos);
  ed.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.AtTop);
}

/** The mark of a session in lists: `⏸ waiting for you: question` and/or `● new`. */
export function marks(s: Session, unseen: boolean): string[] {
  const out: string[] = [];
  if (s.waiting) {
    out.push(`⏸ waiting for you: ${s.waiting.kind}`);
  }
  if (unseen) {
    out.push('● new');
  }
  return out;
}

/** A sentence for tooltips: what the session waits for. */
export function waitingText(s: Session): string | undefined {
  const w = s.waiting;
  if (!w) {
    return undefined;
  }
  const what = { question: 'a question to answer', plan: 'a plan to approve', permission: 'a permission to give', gate: 'a pipeline gate' }[w.kind] ?? w.kind;
  return `Waiting for you (turn ${w.turn}): ${what}${w.detail ? ` — ${w.detail}` : ''}`;
}
