// From a source file to the agent sessions that wrote it (issue 22 items 3, 4; server/PROTOCOL.md,
// "File history and agent blame"): "Transcript: Agent History of This File" (palette and the
// editor title menu) picks a session and turn that changed the file and opens the turn in the
// view beside its diff of the file; "Transcript: Toggle Agent Blame" shows, after each block of
// lines an agent wrote that is still there, who wrote it (as git blame extensions do), with a
// hover that opens the turn. Blame follows the editor's text (asked again 400 ms after a change).
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export interface Host {
  client(): LanguageClient | undefined;
  /** Opens the rendered view of a transcript file (titled by `title` when given). */
  openView(uri: vscode.Uri, title?: string, column?: vscode.ViewColumn): Promise<void>;
  /** Makes sure `transcript:` side documents can be served. */
  ensureViewProvider(): void;
  log(msg: string): void;
}

/** One entry of `transcript/fileHistory` (and the turn part of a blame range). */
export interface HistoryEntry {
  uri: string;
  agent: string;
  sessionTitle: string;
  turn: number;
  turnTitle: string;
  time: string | null;
  action?: string;
  added?: number;
  removed?: number;
  line: number;
  label: string;
  prompt?: string;
}

interface BlameRange extends HistoryEntry {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** `A` created, `M` modified, `D` deleted (as the outline's and Neovim's labels write them). */
const ACTION_LETTER: Record<string, string> = { created: 'A', modified: 'M', deleted: 'D' };

/** The file path of a text editor's document, or undefined for other schemes. */
function fileOf(doc: vscode.TextDocument | undefined): string | undefined {
  return doc && doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
}

export function register(ctx: vscode.ExtensionContext, host: Host): void {
  const blame = new Blame(host);
  ctx.subscriptions.push(blame);
  const command = (id: string, fn: (...args: any[]) => unknown) => ctx.subscriptions.push(vscode.commands.registerCommand(id, fn));
  command('transcript-ls.fileHistory', (uri?: vscode.Uri) => fileHistory(host, uri));
  command('transcript-ls.toggleBlame', () => blame.toggle());
  command('transcript-ls.openHistoryEntry', (entry: HistoryEntry, file: string) => openEntry(host, entry, file));
}

/** "Agent History of This File": a quick pick of every session and turn that changed it. */
async function fileHistory(host: Host, arg?: vscode.Uri): Promise<void> {
  const c = host.client();
  const file = arg instanceof vscode.Uri && arg.scheme === 'file' ? arg.fsPath : fileOf(vscode.window.activeTextEditor?.document);
  if (!c) {
    void vscode.window.showWarningMessage('Transcript LS: the server is not running.');
    return;
  }
  if (!file) {
    void vscode.window.showInformationMessage('Transcript: Agent History needs a file on disk (this editor shows none).');
    return;
  }
  let result: { path: string; entries: HistoryEntry[] } | null;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Transcript: agent history' },
      () => c.sendRequest('transcript/fileHistory', { path: file }),
    );
  } catch (e) {
    void vscode.window.showErrorMessage(`Transcript: cannot read the agent history: ${e instanceof Error ? e.message : e}`);
    return;
  }
  const entries = result?.entries ?? [];
  const name = vscode.workspace.asRelativePath(file);
  if (entries.length === 0) {
    void vscode.window.showInformationMessage(`Transcript: no indexed session changed ${name}.`);
    return;
  }
  const items = entries.map((e) => ({
    label: e.turnTitle || e.sessionTitle,
    description: `${e.agent} · turn ${e.turn} · ${ACTION_LETTER[e.action ?? 'modified'] ?? 'M'} +${e.added ?? 0} −${e.removed ?? 0}`,
    detail: `${e.time ? new Date(e.time).toLocaleString() : ''}  ${e.sessionTitle}`,
    entry: e,
  }));
  const pick = await vscode.window.showQuickPick(items, {
    title: `Agent history of ${name} (${entries.length})`,
    placeHolder: 'Session and turn to open (its view and its diff of this file)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (pick) {
    await openEntry(host, pick.entry, result?.path ?? file);
  }
}

/** Opens a turn in its session's view (at the turn's heading) and, beside it, the turn's
 * change of `file` in the diff editor. */
async function openEntry(host: Host, entry: HistoryEntry, file: string): Promise<void> {
  const c = host.client();
  if (!c) {
    return;
  }
  const transcript = vscode.Uri.parse(entry.uri);
  try {
    const opened: any = await c.sendRequest(ExecuteCommandRequest.type, {
      command: 'transcript.openView',
      arguments: [{ uri: entry.uri, turn: entry.turn }],
    });
    await host.openView(transcript, entry.sessionTitle, vscode.ViewColumn.One);
    const ed = vscode.window.activeTextEditor;
    if (ed && typeof opened?.line === 'number') {
      const pos = new vscode.Position(opened.line, 0);
      ed.selection = new vscode.Selection(pos, pos);
      ed.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.AtTop);
    }
    // Asked of the view (`transcript:///…`, read from disk): the raw file need not be open.
    const set: any = await c.sendRequest(ExecuteCommandRequest.type, {
      command: 'transcript.showChanges',
      arguments: [{ uri: entry.uri.replace(/^file:/, 'transcript:'), turn: entry.turn }],
    });
    const f = (set?.files ?? []).find((f: any) => f.path === file) ?? (set?.files ?? [])[0];
    if (!f) {
      void vscode.window.showInformationMessage(`Transcript: turn ${entry.turn} changed no file.`);
      return;
    }
    host.ensureViewProvider();
    const side = (u: string) => c.protocol2CodeConverter.asUri(u);
    const title = `${f.relativePath ?? f.path} · turn ${entry.turn} (${entry.agent})`;
    await vscode.commands.executeCommand('vscode.diff', side(f.before), side(f.after), title, {
      preview: false,
      viewColumn: vscode.ViewColumn.Beside,
    });
  } catch (e) {
    void vscode.window.showErrorMessage(`Transcript: cannot open turn ${entry.turn}: ${e instanceof Error ? e.message : e}`);
  }
}

/** Agent blame as after-text decorations on each block's first line, per file editor. */
class Blame implements vscode.Disposable {
  private on = false;
  private readonly first = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 3em', fontStyle: 'italic' },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  private readonly rest = vscode.window.createTextEditorDecorationType({
    after: { contentText: '┆', color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 3em' },
  });
  private readonly subs: vscode.Disposable[] = [];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);

  constructor(private readonly host: Host) {
    this.status.command = 'transcript-ls.toggleBlame';
    this.status.tooltip = 'Transcript: agent blame is on (click to turn it off)';
    this.subs.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.on && this.refreshVisible()),
      vscode.workspace.onDidChangeTextDocument((e) => this.on && this.schedule(e.document)),
    );
  }

  toggle(): void {
    this.on = !this.on;
    if (this.on) {
      this.status.text = '$(edit) agent blame';
      this.status.show();
      void this.refreshVisible(true);
    } else {
      this.status.hide();
      for (const ed of vscode.window.visibleTextEditors) {
        ed.setDecorations(this.first, []);
        ed.setDecorations(this.rest, []);
      }
    }
  }

  private schedule(doc: vscode.TextDocument): void {
    if (!fileOf(doc)) {
      return;
    }
    const key = doc.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      for (const ed of vscode.window.visibleTextEditors.filter((e) => e.document === doc)) {
        void this.refresh(ed, false);
      }
    }, 400));
  }

  private async refreshVisible(announce = false): Promise<void> {
    const eds = vscode.window.visibleTextEditors.filter((e) => fileOf(e.document));
    if (announce && eds.length === 0) {
      void vscode.window.showInformationMessage('Transcript: agent blame is on; it shows in editors of files on disk.');
    }
    await Promise.all(eds.map((ed) => this.refresh(ed, announce && ed === vscode.window.activeTextEditor)));
  }

  private async refresh(ed: vscode.TextEditor, announce: boolean): Promise<void> {
    const c = this.host.client();
    const file = fileOf(ed.document);
    if (!c || !file) {
      return;
    }
    let result: { path: string; ranges: BlameRange[] } | null;
    try {
      result = await c.sendRequest('transcript/blame', { path: file, text: ed.document.getText() });
    } catch (e) {
      this.host.log(`transcript/blame ${file}: ${e instanceof Error ? e.message : e}`);
      if (announce) {
        void vscode.window.showErrorMessage(`Transcript: cannot read the agent blame: ${e instanceof Error ? e.message : e}`);
      }
      return;
    }
    if (!this.on) {
      return;
    }
    const ranges = result?.ranges ?? [];
    const first: vscode.DecorationOptions[] = [];
    const rest: vscode.DecorationOptions[] = [];
    for (const r of ranges) {
      const hover = new vscode.MarkdownString(undefined, true);
      hover.isTrusted = { enabledCommands: ['transcript-ls.openHistoryEntry'] };
      const args = encodeURIComponent(JSON.stringify([r, result?.path ?? file]));
      hover.appendMarkdown(`**${escape(r.agent)}** · turn ${r.turn} of *${escape(r.sessionTitle)}*`);
      if (r.time) {
        hover.appendMarkdown(` · ${escape(new Date(r.time).toLocaleString())}`);
      }
      hover.appendMarkdown('\n\n');
      if (r.prompt) {
        hover.appendMarkdown(`> ${escape(r.prompt)}\n\n`);
      }
      hover.appendMarkdown(`[Open the turn and its diff](command:transcript-ls.openHistoryEntry?${args})`);
      const start = r.range.start.line;
      const end = Math.min(r.range.end.line, ed.document.lineCount - 1);
      const eol = ed.document.lineAt(start).range.end;
      first.push({
        range: new vscode.Range(eol, eol),
        hoverMessage: hover,
        renderOptions: { after: { contentText: `✎ ${r.label}` } },
      });
      for (let l = start + 1; l <= end; l++) {
        const e = ed.document.lineAt(l).range.end;
        rest.push({ range: new vscode.Range(e, e), hoverMessage: hover });
      }
    }
    ed.setDecorations(this.first, first);
    ed.setDecorations(this.rest, rest);
    if (announce) {
      const lines = ranges.reduce((n, r) => n + r.range.end.line - r.range.start.line + 1, 0);
      vscode.window.setStatusBarMessage(
        ranges.length ? `Transcript: ${lines} lines in ${ranges.length} blocks written by agents` : 'Transcript: no line of this file is an agent\'s (per the indexed sessions)',
        5000,
      );
    }
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
    this.timers.forEach((t) => clearTimeout(t));
    this.first.dispose();
    this.rest.dispose();
    this.status.dispose();
  }
}

/** Markdown-escapes text shown in a hover. */
function escape(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
